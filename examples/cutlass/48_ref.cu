// The naive reference for CUTLASS example 48 (48_*.json), in the example's
// types and layouts: f32 throughout, A row-major M x K, B column-major K x N
// (so both are K-contiguous), C and D column-major M x N. One thread per row
// of D, looping over its columns: few CTAs, because a grid with clusters and
// TMA is checked CTA by CTA (docs/reports.md, "A whole grid by CTA classes").
// D[m + n*M] = alpha * sum_k A[m*K + k] * B[n*K + k] + beta * C[m + n*M]
extern "C" __global__ void gemm_tn_ref(int M, int N, int K, const float* A, const float* B, const float* C, float* D,
                                       float alpha, float beta) {
  int m = blockIdx.x * blockDim.x + threadIdx.x;
  if (m >= M) return;
  for (int n = 0; n < N; ++n) {
    float acc = 0.f;
    for (int k = 0; k < K; ++k) acc += A[m * K + k] * B[n * K + k];
    D[m + n * M] = alpha * acc + beta * C[m + n * M];
  }
}
