// One warpgroup's 64x64x16 f16 GEMM with wgmma.mma_async (sm_90a), against
// a naive GEMM. Regenerate the PTX with
//   nvcc -arch=sm_90a -ptx -lineinfo wgmma_gemm.cu -o wgmma_gemm.ptx
//
// c[m][n] = sum_k a[m][k] * b[n][k] (b holds B transposed: both operands
// K-major, wgmma's default). The wgmma kernels copy a and b into shared
// memory with plain stores in the 128-byte swizzled layout (each row of 16
// elements at the start of a 128-byte row, its 16-byte chunks XORed with
// the row within 8 rows), fence.proxy.async so that the async proxy sees
// the stores, and build the matrix descriptors from the shared address.
#include <cuda_fp16.h>
#include <cstdint>

__global__ void naive_gemm(const __half* a, const __half* b, float* c) {
  const int m = threadIdx.x / 64, n = threadIdx.x % 64;
  for (int row = m; row < 64; row += blockDim.x / 64) {
    float s = 0.0f;
    for (int k = 0; k < 16; ++k) s += __half2float(a[row * 16 + k]) * __half2float(b[n * 16 + k]);
    c[row * 64 + n] = s;
  }
}

// The byte offset of element (row, k) of a 16-wide K-major tile in the
// 128B-swizzle layout (PTX ISA, "Shared Memory Matrix Layout").
__device__ unsigned swizzled(int row, int k) {
  unsigned o = unsigned(row) * 128 + unsigned(k) * 2;
  return o ^ (((o >> 7) & 7) << 4);
}

// desc: start address >> 4, SBO (8 rows of 128 bytes) = 1024 >> 4, 128B swizzle.
__device__ uint64_t descriptor(const void* smem, unsigned sbo) {
  const uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  return uint64_t((addr >> 4) & 0x3fff) | (uint64_t(1) << 16) | (uint64_t(sbo >> 4) << 32) | (uint64_t(1) << 62);
}

// MODE 0: correct; 1: a wrong stride byte offset (512 for 1024) in B's
// descriptor; 2: the accumulators are stored before wgmma.wait_group.
template <int MODE>
__device__ void wgmma_gemm(const __half* a, const __half* b, float* c) {
  __shared__ __align__(1024) unsigned char sa[64 * 128];
  __shared__ __align__(1024) unsigned char sb[64 * 128];
  const int tid = threadIdx.x;
  for (int i = tid; i < 64 * 16; i += 128) {
    *reinterpret_cast<__half*>(sa + swizzled(i / 16, i % 16)) = a[i];
    *reinterpret_cast<__half*>(sb + swizzled(i / 16, i % 16)) = b[i];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const uint64_t da = descriptor(sa, 1024), db = descriptor(sb, MODE == 1 ? 512 : 1024);
  float d[32];
  for (int i = 0; i < 32; ++i) d[i] = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
  asm volatile(
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, 0, 1, 1, 0, 0;\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]),
        "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]),
        "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db));
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
  if (MODE != 2) asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
  // The accumulator layout (PTX ISA, "Register Fragments"): warp w holds
  // rows 16w..16w+15; d[i] is at row lane/4 (+8 for i%4 >= 2), column
  // 8*(i/4) + 2*(lane%4) + i%2.
  const int warp = tid / 32, lane = tid % 32;
  for (int i = 0; i < 32; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i >> 1) & 1), col = 8 * (i >> 2) + 2 * (lane % 4) + (i & 1);
    c[row * 64 + col] = d[i];
  }
  if (MODE == 2) asm volatile("wgmma.wait_group.sync.aligned 0;\n" ::: "memory");
}

__global__ void __launch_bounds__(128) wgmma_gemm_ok(const __half* a, const __half* b, float* c) { wgmma_gemm<0>(a, b, c); }
__global__ void __launch_bounds__(128) wgmma_gemm_bad_sbo(const __half* a, const __half* b, float* c) { wgmma_gemm<1>(a, b, c); }
__global__ void __launch_bounds__(128) wgmma_gemm_early_read(const __half* a, const __half* b, float* c) { wgmma_gemm<2>(a, b, c); }
