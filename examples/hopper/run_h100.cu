// Host harness of the Hopper examples: runs one variant of gemm_sm90.cuh on
// the GPU and compares C with an exact CPU reference.
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O2 run_h100.cu -lcuda -o run_h100
//   ./run_h100 tma_gemm          # prints one line: "tma_gemm: OK", "...: WRONG (...)", "...: ERROR ..."
//   ./run_h100 --list
//
// A and B hold small integers (exact in f16, and every sum of products is
// exact in f32), so the comparison is exact. C starts as NaN, so an element
// no CTA writes is a mismatch. A variant that hangs never returns: run it
// under `timeout` (run_h100.sh does) and call that "HANG".
#include <cuda.h>
#include <cuda_runtime.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "gemm_sm90.cu"
#include "ref_gemm.cu"

namespace {

constexpr int M = 128, N = 128, K = 384;

using GemmFn = void (*)(CUtensorMap, CUtensorMap, float*, int, int, int);
using StoreFn = void (*)(CUtensorMap, CUtensorMap, CUtensorMap, int, int, int);

struct Variant {
  const char* name;
  GemmFn gemm;       // C by st.global
  StoreFn store;     // C by TMA store
  int extra_grid_x;  // the stray-CTA launch: one 64-row block more than M has
  const char* what;
  int cluster_x = 1, cluster_y = 1;  // a cluster launch (gemm_cluster.cuh): A's box is then 32 rows
};

const Variant kVariants[] = {
    {"tma_gemm", tma_gemm, nullptr, 0, "correct: TMA + mbarrier pipeline, wgmma, st.global epilogue"},
    {"tma_gemm_store", nullptr, tma_gemm_store, 0, "correct: epilogue through shared memory and a TMA store"},
    {"phase_no_mod2", tma_gemm_phase_no_mod2, nullptr, 0, "consumer waits full[s] with parity = visit (0,1,2)"},
    {"consumer_no_release", tma_gemm_consumer_no_release, nullptr, 0, "consumer never arrives on empty[s]"},
    {"tx_too_small", tma_gemm_tx_too_small, nullptr, 0, "expect_tx counts A's tile bytes only"},
    {"no_full_wait", tma_gemm_no_full_wait, nullptr, 0, "consumer never waits on full[s]"},
    {"stray_cta", tma_gemm, nullptr, 1, "correct kernel, grid.x = M/64 + 1: the last CTA column loads outside A"},
    {"store_no_proxy_fence", nullptr, tma_gemm_store_no_proxy_fence, 0,
     "TMA store of a tile written by st.shared without fence.proxy.async"},
    {"tma_gemm_store_rev", nullptr, tma_gemm_store_rev, 0, "correct: TMA store, tiles of M walked from the end"},
    {"stray_cta_store", nullptr, tma_gemm_store_rev, 1,
     "tiles from the end, grid.x = M/64 + 1: the last CTA column loads and TMA-stores at row -64"},
    {"cluster_gemm", cluster_gemm, nullptr, 0, "correct: 2-CTA clusters (1,2,1) sharing A by TMA multicast", 1, 2},
    {"cluster_tx_not_doubled", cluster_gemm_tx_not_doubled, nullptr, 0,
     "expect_tx counts this CTA's half of A only, not the half the peer multicasts", 1, 2},
    {"cluster_diff_coords", cluster_gemm, nullptr, 0,
     "the cluster kernel launched with clusters (2,1,1): the two CTAs have different A tiles", 2, 1},
    {"cluster_local_count", cluster_gemm_local_count, nullptr, 0,
     "empty[s] counts the local warps' 4 arrivals while both CTAs' 8 arrive", 1, 2},
    {"cluster_tail_drain", cluster_gemm_tail_drain, nullptr, 0,
     "consumers leave the last 2 fills unreleased; the producer drains the pipeline at the end", 1, 2},
    {"cluster_local_release", cluster_gemm_local_release, nullptr, 0,
     "consumers release stage s in their own CTA only; empty[s] still counts 8", 1, 2},
};

#define CHECK_SETUP(x)                                                                          \
  do {                                                                                          \
    cudaError_t e_ = (x);                                                                       \
    if (e_ != cudaSuccess) {                                                                    \
      std::printf("%s: SETUP ERROR %s: %s (%s)\n", name, cudaGetErrorName(e_), cudaGetErrorString(e_), #x); \
      return 3;                                                                                 \
    }                                                                                           \
  } while (0)

// A 2D tensor map over a row-major [rows, cols] tensor: dims innermost first.
bool encode_2d(CUtensorMap* map, CUtensorMapDataType dtype, size_t elem, void* base, uint64_t rows, uint64_t cols,
               uint32_t box_cols, uint32_t box_rows, CUtensorMapSwizzle swizzle) {
  const cuuint64_t dims[2] = {cols, rows};
  const cuuint64_t strides[1] = {cols * elem};  // bytes from one row to the next
  const cuuint32_t box[2] = {box_cols, box_rows};
  const cuuint32_t estrides[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(map, dtype, 2, base, dims, strides, box, estrides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                      swizzle, CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    const char* s = nullptr;
    cuGetErrorString(r, &s);
    std::printf("cuTensorMapEncodeTiled failed: %s\n", s ? s : "?");
    return false;
  }
  return true;
}

int run(const Variant& v) {
  const char* name = v.name;
  std::vector<__half> a(M * K), b(N * K);
  std::vector<float> want(M * N), got(M * N);
  uint32_t seed = 12345;
  auto rnd = [&] {  // small integers in [-4, 4]
    seed = seed * 1664525u + 1013904223u;
    return static_cast<int>((seed >> 16) % 9) - 4;
  };
  for (auto& x : a) x = __float2half(static_cast<float>(rnd()));
  for (auto& x : b) x = __float2half(static_cast<float>(rnd()));
  for (int i = 0; i < M; ++i)
    for (int j = 0; j < N; ++j) {
      double s = 0;
      for (int k = 0; k < K; ++k) s += double(__half2float(a[i * K + k])) * double(__half2float(b[j * K + k]));
      want[i * N + j] = static_cast<float>(s);
    }

  CHECK_SETUP(cudaSetDevice(0));
  __half *dA, *dB;
  float* dC;
  CHECK_SETUP(cudaMalloc(&dA, a.size() * sizeof(__half)));
  CHECK_SETUP(cudaMalloc(&dB, b.size() * sizeof(__half)));
  CHECK_SETUP(cudaMalloc(&dC, got.size() * sizeof(float)));
  CHECK_SETUP(cudaMemcpy(dA, a.data(), a.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_SETUP(cudaMemcpy(dB, b.data(), b.size() * sizeof(__half), cudaMemcpyHostToDevice));
  CHECK_SETUP(cudaMemset(dC, 0xff, got.size() * sizeof(float)));  // NaN everywhere

  CUtensorMap amap, bmap, cmap;
  const bool cluster = v.cluster_x * v.cluster_y > 1;
  if (!encode_2d(&amap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dA, M, K, 64, cluster ? 32 : 64,
                 CU_TENSOR_MAP_SWIZZLE_128B) ||
      !encode_2d(&bmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, dB, N, K, 64, 64, CU_TENSOR_MAP_SWIZZLE_128B) ||
      !encode_2d(&cmap, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, dC, M, N, 64, 64, CU_TENSOR_MAP_SWIZZLE_NONE))
    return 3;

  const dim3 grid(M / 64 + v.extra_grid_x, N / 64), block(hopper_gemm::kThreads);  // 2 x 2 tiles
  cudaError_t e = cudaSuccess;
  if (cluster) {
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = v.cluster_x;
    attr[0].val.clusterDim.y = v.cluster_y;
    attr[0].val.clusterDim.z = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    e = cudaLaunchKernelEx(&cfg, v.gemm, amap, bmap, dC, M, N, K);
  } else if (v.gemm) {
    v.gemm<<<grid, block>>>(amap, bmap, dC, M, N, K);
  } else {
    v.store<<<grid, block>>>(amap, bmap, cmap, M, N, K);
  }
  if (e == cudaSuccess) e = cudaGetLastError();
  if (e == cudaSuccess) e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("%s: ERROR %s: %s\n", name, cudaGetErrorName(e), cudaGetErrorString(e));
    return 2;
  }
  CHECK_SETUP(cudaMemcpy(got.data(), dC, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0, first = -1, nan = 0;
  for (int i = 0; i < M * N; ++i)
    if (!(got[i] == want[i])) {
      if (first < 0) first = i;
      ++bad;
      nan += std::isnan(got[i]);
    }
  if (!bad) {
    std::printf("%s: OK\n", name);
    return 0;
  }
  std::printf("%s: WRONG (%d mismatches of %d, %d of them never written; first at C[%d][%d]: %g, want %g)\n", name, bad,
              M * N, nan, first / N, first % N, got[first], want[first]);
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s VARIANT | --list\n", argv[0]);
    return 4;
  }
  for (const Variant& v : kVariants) {
    if (!std::strcmp(argv[1], "--list")) {
      std::printf("%s\t%s\n", v.name, v.what);
      continue;
    }
    if (!std::strcmp(argv[1], v.name)) return run(v);
  }
  if (!std::strcmp(argv[1], "--list")) return 0;
  std::fprintf(stderr, "unknown variant %s\n", argv[1]);
  return 4;
}
