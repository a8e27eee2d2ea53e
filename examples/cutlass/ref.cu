// The naive reference for examples/cutlass: one thread per element of C,
// with the layouts of the CuTe tutorial's NT GEMM (A and B MN-major, C column-major).
#include <cuda_fp16.h>
// C[m + n*ldC] = alpha * sum_k A[m + k*ldA] * B[n + k*ldB] + beta * C[m + n*ldC]
extern "C" __global__ void gemm_nt_ref(int M, int N, int K, const __half* A, int ldA, const __half* B, int ldB,
                                       __half* C, int ldC, __half alpha, __half beta) {
  int m = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(A[m + k * ldA]) * float(B[n + k * ldB]);
  C[m + n * ldC] = __float2half(float(alpha) * acc + float(beta) * float(C[m + n * ldC]));
}

// The TN GEMM of the same tutorials: A and B K-major (A[m*ldA + k], B[n*ldB + k]), C column-major.
// C[m + n*ldC] = alpha * sum_k A[m*ldA + k] * B[n*ldB + k] + beta * C[m + n*ldC]
extern "C" __global__ void gemm_tn_ref(int M, int N, int K, const __half* A, int ldA, const __half* B, int ldB,
                                       __half* C, int ldC, __half alpha, __half beta) {
  int m = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(A[m * ldA + k]) * float(B[n * ldB + k]);
  C[m + n * ldC] = __float2half(float(alpha) * acc + float(beta) * float(C[m + n * ldC]));
}
