// Runs CuTe's Hopper tutorial GEMM (examples/cutlass/wgmma_tma_sm90.ptx, or
// one of its planted-bug edits) on a GPU exactly as the spec describes it,
// to see what the hardware does with each bug: a right answer, a wrong one,
// a fault, or a hang. The PTX goes through the driver's JIT, the TMA maps
// are built as the spec's `tensor_map` entries say (CuTe's make_tma_atom),
// and the by-value struct parameters are filled byte by byte, as tileverify
// fills them. A, B are +-1 and the GEMM is f16 with K <= 256, so every
// partial sum is an exact integer and the comparison is exact.
//
//   g++ -std=c++17 -O2 -I/usr/local/cuda/include cute_tma_tutorial.cpp
//       -L/usr/local/cuda/lib64/stubs -lcuda -o /tmp/cute_tma
//   /tmp/cute_tma PTX nt|tn M N K [TIMEOUT_S]
//
// A hung kernel cannot be stopped from the host: after TIMEOUT_S (default
// 10) the program prints HANG and exits without tearing the context down.
#include <cuda.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

namespace {

void check(CUresult r, const char* what, int line) {
  if (r == CUDA_SUCCESS) return;
  const char* name = nullptr;
  cuGetErrorName(r, &name);
  std::printf("ERROR %s: %s (line %d)\n", what, name ? name : "?", line);
  std::fflush(stdout);
  _exit(2);
}
#define CK(x) check((x), #x, __LINE__)

// The .entry names of the PTX, in order (the tutorial's file has the NT
// kernel first, then the TN one).
std::vector<std::string> entries(const std::string& ptx) {
  std::vector<std::string> names;
  for (std::size_t p = ptx.find(".entry "); p != std::string::npos; p = ptx.find(".entry ", p + 1)) {
    const std::size_t b = p + 7, e = ptx.find('(', b);
    names.push_back(ptx.substr(b, e - b));
  }
  return names;
}

std::uint16_t half_of(int v) {  // 0, 1 and -1 only
  return v == 0 ? 0 : v > 0 ? 0x3C00 : 0xBC00;
}
int int_of_half(std::uint16_t h) {  // exact small integers: sign, exponent, mantissa
  if ((h & 0x7FFF) == 0) return 0;
  const int e = (h >> 10 & 31) - 15, m = (h & 1023) | 1024;
  const int v = e >= 10 ? m << (e - 10) : m >> (10 - e);
  return h & 0x8000 ? -v : v;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 6) {
    std::printf("usage: %s PTX nt|tn M N K [TIMEOUT_S]\n", argv[0]);
    return 1;
  }
  const bool tn = std::strcmp(argv[2], "tn") == 0;
  const int M = std::atoi(argv[3]), N = std::atoi(argv[4]), K = std::atoi(argv[5]);
  const int timeout = argc > 6 ? std::atoi(argv[6]) : 10;
  std::ifstream f(argv[1]);
  std::stringstream ss;
  ss << f.rdbuf();
  const std::string ptx = ss.str();
  const std::vector<std::string> names = entries(ptx);
  if (names.size() < 2) {
    std::printf("ERROR: %s has %zu kernels, expected the tutorial's 2\n", argv[1], names.size());
    return 1;
  }

  CK(cuInit(0));
  CUdevice dev;
  CK(cuDeviceGet(&dev, 0));
  CUcontext ctx;
  CK(cuDevicePrimaryCtxRetain(&ctx, dev));
  CK(cuCtxSetCurrent(ctx));
  CUmodule mod;
  CK(cuModuleLoadData(&mod, ptx.c_str()));
  CUfunction fn;
  CK(cuModuleGetFunction(&fn, mod, names[tn ? 1 : 0].c_str()));

  // A (M x K) and B (N x K): NT keeps M (N) contiguous, TN keeps K contiguous.
  std::vector<int> a(std::size_t(M) * K), b(std::size_t(N) * K);
  std::uint32_t rng = 12345u;
  auto pm1 = [&] {
    rng ^= rng << 13, rng ^= rng >> 17, rng ^= rng << 5;
    return (rng >> 7 & 1) ? 1 : -1;
  };
  for (int& v : a) v = pm1();
  for (int& v : b) v = pm1();
  auto at = [&](const std::vector<int>& x, int rows, int r, int k) {
    return tn ? x[std::size_t(r) * K + k] : x[r + std::size_t(k) * rows];
  };
  std::vector<std::uint16_t> ha(a.size()), hb(b.size()), hc(std::size_t(M) * N, 0);
  for (std::size_t i = 0; i < a.size(); ++i) ha[i] = half_of(a[i]);
  for (std::size_t i = 0; i < b.size(); ++i) hb[i] = half_of(b[i]);
  CUdeviceptr da, db, dc;
  CK(cuMemAlloc(&da, ha.size() * 2));
  CK(cuMemAlloc(&db, hb.size() * 2));
  CK(cuMemAlloc(&dc, hc.size() * 2));
  CK(cuMemcpyHtoD(da, ha.data(), ha.size() * 2));
  CK(cuMemcpyHtoD(db, hb.data(), hb.size() * 2));
  CK(cuMemsetD16(dc, 0x7E00, hc.size()));  // NaN: an element nobody writes shows

  // The maps as the spec gives them: NT, inner dimension M (N) with boxes of
  // 64 x 8; TN, inner dimension K with boxes of 64 x 128; 128-byte swizzle.
  auto map = [&](CUdeviceptr p, int rows) {
    CUtensorMap m;
    const cuuint64_t dims[2] = {cuuint64_t(tn ? K : rows), cuuint64_t(tn ? rows : K)};
    const cuuint64_t strides[1] = {dims[0] * 2};
    const cuuint32_t box[2] = {64, tn ? 128u : 8u}, estr[2] = {1, 1};
    CK(cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, reinterpret_cast<void*>(p), dims, strides, box,
                              estr, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                              CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return m;
  };
  // The 11 by-value parameters, byte for byte as the spec fills them.
  alignas(128) unsigned char tma_a[256] = {}, tma_b[256] = {};
  const CUtensorMap ma = map(da, M), mb = map(db, N);
  std::memcpy(tma_a, &ma, sizeof ma);
  std::memcpy(tma_b, &mb, sizeof mb);
  int shape[3] = {M, N, K};
  unsigned char tiler = 0;
  int ldc = M;
  int mma[2] = {1, 0};
  std::uint16_t alpha = 0x3C00, beta = 0;
  void* params[] = {shape, &tiler, &da, tma_a, &db, tma_b, &dc, &ldc, mma, &alpha, &beta};

  const int smem = 98432;  // sizeof(SharedStorage): 3 stages of A and B, 6 barriers, 128-aligned
  CK(cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem));
  CUlaunchAttribute attr;
  attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
  attr.value.clusterDim.x = 2;
  attr.value.clusterDim.y = 1;
  attr.value.clusterDim.z = 1;
  CUlaunchConfig cfg = {};
  cfg.gridDimX = unsigned(M / 128);
  cfg.gridDimY = unsigned(N / 128);
  cfg.gridDimZ = 1;
  cfg.blockDimX = 128;
  cfg.blockDimY = cfg.blockDimZ = 1;
  cfg.sharedMemBytes = smem;
  cfg.attrs = &attr;
  cfg.numAttrs = 1;
  CK(cuLaunchKernelEx(&cfg, fn, params, nullptr));
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    const CUresult r = cuStreamQuery(nullptr);
    if (r == CUDA_SUCCESS) break;
    if (r != CUDA_ERROR_NOT_READY) check(r, "the kernel", __LINE__);
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(timeout)) {
      std::printf("HANG (still running after %d s)\n", timeout);
      std::fflush(stdout);
      _exit(3);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  CK(cuMemcpyDtoH(hc.data(), dc, hc.size() * 2));
  long wrong = 0;
  for (int n = 0; n < N; ++n)
    for (int m = 0; m < M; ++m) {
      int want = 0;
      for (int k = 0; k < K; ++k) want += at(a, M, m, k) * at(b, N, n, k);
      const std::uint16_t got = hc[std::size_t(m) + std::size_t(n) * M];
      if ((got & 0x7C00) == 0x7C00 || int_of_half(got) != want) {
        if (wrong < 5) std::printf("MISMATCH C[%d][%d] = 0x%04x, want %d\n", m, n, got, want);
        ++wrong;
      }
    }
  if (wrong)
    std::printf("WRONG (%ld of %d elements)\n", wrong, M * N);
  else
    std::printf("OK\n");
  return wrong ? 4 : 0;
}
