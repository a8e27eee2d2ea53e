// C (32 x 32, f32, row-major) = A (32 x K f16, row-major) * B (K x 32 f16,
// column-major: b[j * K + k] is B[k][j]): four warps, one 16 x 16 tile each,
// K / 16 wmma.mma per warp. A benchmark of symbolic wmma at long K.
#include <mma.h>
#include <cuda_fp16.h>
using namespace nvcuda;

extern "C" __global__ void wmma_k(const __half* a, const __half* b, float* c, int K) {
  int warp = threadIdx.x / 32, wm = warp / 2, wn = warp % 2;
  wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major> fa;
  wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::col_major> fb;
  wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;
  wmma::fill_fragment(fc, 0.0f);
  for (int k = 0; k < K; k += 16) {
    wmma::load_matrix_sync(fa, a + wm * 16 * K + k, K);
    wmma::load_matrix_sync(fb, b + wn * 16 * K + k, K);
    wmma::mma_sync(fc, fa, fb, fc);
  }
  wmma::store_matrix_sync(c + wm * 16 * 32 + wn * 16, fc, 32, wmma::mem_row_major);
}

// The naive loop in the same layouts, one thread per element of C.
extern "C" __global__ void naive_k(const __half* a, const __half* b, float* c, int K) {
  int i = blockIdx.x, j = threadIdx.x;
  float acc = 0.0f;
  for (int k = 0; k < K; ++k) acc += __half2float(a[i * K + k]) * __half2float(b[j * K + k]);
  c[i * 32 + j] = acc;
}
