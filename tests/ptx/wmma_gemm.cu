// Kernels for tests/ptx/wmma_test.cpp; wmma_gemm.ptx is
// nvcc -arch=sm_80 -O3 -ptx wmma_gemm.cu (CUDA 13.0).
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

// C (32x32, f32, row-major) = A (32x32 f16, row-major) * B (32x32 f16,
// column-major: b[j * 32 + k] is B[k][j]). Four warps, one 16x16 tile each.
extern "C" __global__ void wmma_gemm(const __half* a, const __half* b, float* c) {
  int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < 32; k += 16) {
    wmma::load_matrix_sync(fa, a + wm * 16 * 32 + k, 32);
    wmma::load_matrix_sync(fb, b + wn * 16 * 32 + k, 32);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c + wm * 16 * 32 + wn * 16, fc, 32, wmma::mem_row_major);
}

// The same product through shared memory, B row-major this time (b2[k * 32 + j]
// is B[k][j]), C stored column-major into shared memory and copied out.
extern "C" __global__ void wmma_gemm_smem(const __half* a, const __half* b2, float* c) {
  __shared__ __half sa[32 * 32], sb[32 * 32];
  __shared__ float sc[32 * 32];
  int t = threadIdx.x;
  for (int i = t; i < 32 * 32; i += blockDim.x) { sa[i] = a[i]; sb[i] = b2[i]; }
  __syncthreads();
  int warp = t / 32, wm = warp / 2, wn = warp % 2;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < 32; k += 16) {
    wmma::load_matrix_sync(fa, sa + wm * 16 * 32 + k, 32);
    wmma::load_matrix_sync(fb, sb + k * 32 + wn * 16, 32);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  for (int i = 0; i < fc.num_elements; ++i) fc.x[i] *= 2.0f;  // elementwise: layout-free
  wmma::store_matrix_sync(sc + wn * 16 * 32 + wm * 16, fc, 32, wmma::mem_col_major);
  __syncthreads();
  for (int i = t; i < 32 * 32; i += blockDim.x) c[i] = sc[(i % 32) * 32 + i / 32] * 0.5f;
}

// tf32: C (16x16) = A (16x16 f32, row-major) * B (16x16 f32, column-major) + C0, one warp.
extern "C" __global__ void wmma_tf32(const float* a, const float* b, float* c) {
  wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 8, float> fc;
  wmma::load_matrix_sync(fc, c, 16, wmma::mem_row_major);
  for (int k = 0; k < 16; k += 8) {
    wmma::load_matrix_sync(fa, a + k, 16);
    wmma::load_matrix_sync(fb, b + k, 16);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c, fc, 16, wmma::mem_row_major);
}

// The naive loops: c[i][j] = sum_k a[i][k] * B[k][j], B column-major.
extern "C" __global__ void naive_gemm(const __half* a, const __half* b, float* c) {
  for (int idx = threadIdx.x; idx < 32 * 32; idx += blockDim.x) {
    int i = idx / 32, j = idx % 32;
    float s = 0.0f;
    for (int k = 0; k < 32; ++k) s += __half2float(a[i * 32 + k]) * __half2float(b[j * 32 + k]);
    c[idx] = s;
  }
}

// B row-major.
extern "C" __global__ void naive_gemm_rowb(const __half* a, const __half* b2, float* c) {
  for (int idx = threadIdx.x; idx < 32 * 32; idx += blockDim.x) {
    int i = idx / 32, j = idx % 32;
    float s = 0.0f;
    for (int k = 0; k < 32; ++k) s += __half2float(a[i * 32 + k]) * __half2float(b2[k * 32 + j]);
    c[idx] = s;
  }
}

extern "C" __global__ void naive_tf32(const float* a, const float* b, float* c) {
  int idx = threadIdx.x;
  for (int e = idx; e < 256; e += blockDim.x) {
    int i = e / 16, j = e % 16;
    float s = c[e];
    for (int k = 0; k < 16; ++k) s += a[i * 16 + k] * b[j * 16 + k];
    c[e] = s;
  }
}
