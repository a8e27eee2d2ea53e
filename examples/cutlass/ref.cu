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

// ---- TN GEMM: CuTe's Ampere tutorial (sgemm_sm80.cu's half_t TN GEMM) and the Hopper tutorials' TN kernels ----
// The TN layouts of those kernels: A is M x K and B is N x K, both K-major
// (A(m,k) = A[k + m*ldA]), C column-major as above.
extern "C" __global__ void gemm_tn_ref(int M, int N, int K, const __half* A, int ldA, const __half* B, int ldB,
                                       __half* C, int ldC, __half alpha, __half beta) {
  int m = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(A[k + m * ldA]) * float(B[k + n * ldB]);
  C[m + n * ldC] = __float2half(float(alpha) * acc + float(beta) * float(C[m + n * ldC]));
}

// ---- sm80 section (CUTLASS example 14's device::Gemm) ----
// float A row-major M x K, B column-major K x N, C and D row-major M x N:
// D[m*ldD + n] = alpha * sum_k A[m*ldA + k] * B[k + n*ldB] + beta * C[m*ldC + n].
template <class T>
__device__ void gemm_rcr(int M, int N, int K, const T* A, int ldA, const T* B, int ldB, const T* C, int ldC, T* D,
                         int ldD, float alpha, float beta) {
  int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(A[m * ldA + k]) * float(B[k + n * ldB]);
  D[m * ldD + n] = T(alpha * acc + beta * float(C[m * ldC + n]));
}
extern "C" __global__ void gemm_rcr_f32_ref(int M, int N, int K, const float* A, int ldA, const float* B, int ldB,
                                            const float* C, int ldC, float* D, int ldD, float alpha, float beta) {
  gemm_rcr(M, N, K, A, ldA, B, ldB, C, ldC, D, ldD, alpha, beta);
}
