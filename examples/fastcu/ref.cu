// A naive reference for the fast.cu GEMMs (examples/fastcu): C = A B^T with
// A M x K and B N x K row-major bf16, f32 accumulation in k order, and C
// column-major (C[n * M + m]) in bf16, as fast.cu's kernels store it.
#include <cuda_bf16.h>

extern "C" __global__ void gemm_abt_ref(int M, int N, int K, const __nv_bfloat16* A, const __nv_bfloat16* B,
                                        __nv_bfloat16* C) {
  const int m = blockIdx.x * blockDim.x + threadIdx.x, n = blockIdx.y;
  if (m >= M || n >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += __bfloat162float(A[m * K + k]) * __bfloat162float(B[n * K + k]);
  C[n * M + m] = __float2bfloat16(acc);
}
