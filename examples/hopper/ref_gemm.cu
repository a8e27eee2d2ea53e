// The reference of the Hopper examples: the naive GEMM, one thread per
// element of C, in the layouts of gemm_sm90.cuh:
//   C[M,N] (f32) = A[M,K] (f16, row-major) * B[N,K]^T (f16, row-major).
// Each product is exact in f32 and the sum runs over k in order.
#include <cuda_fp16.h>

extern "C" __global__ void gemm_ref(const __half* A, const __half* B, float* C, int M, int N, int K) {
  const int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M || j >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __half2float(A[i * K + k]) * __half2float(B[j * K + k]);
  C[i * N + j] = acc;
}
