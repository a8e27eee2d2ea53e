// Boehm's SGEMM kernel 2 ("global memory coalescing", siboehm.com/articles/
// 22/CUDA-MMM), written here with gemm.cu's arguments: C[M,N] = A[M,K] *
// B[K,N], row-major f32, one thread per element of C as in gemm_naive, but
// a 1D block of 1024 threads whose consecutive threads take consecutive
// columns (tid % 32), so a warp's loads of B and stores of C coalesce.
// Compared with gemm_naive (gemm.cu) by coalesced*.sizes.json.
//   gemm_coalesced:    row = blockIdx.x * 32 + tid / 32, col = blockIdx.y * 32 + tid % 32
//                      (Boehm's indexing). Launch: block [1024, 1, 1], grid [ceil(M/32), ceil(N/32), 1].
//   gemm_coalesced_yx: row = blockIdx.y * 32 + tid / 32, col = blockIdx.x * 32 + tid % 32.
//                      Launch: block [1024, 1, 1], grid [ceil(N/32), ceil(M/32), 1].
// nvcc 13 builds each column as bfi.b32 col, ctaid, tid & 31, 5, 27 (the
// CTA index inserted above the lane's 5 bits). Correct at every M, N, K >= 1.
// PTX: tools/regen_ptx.sh (-O3 -arch=sm_90).

#define B 32

extern "C" __global__ void gemm_coalesced(const float* A, const float* Bm, float* C, int M, int N, int K)
{
    const int row = blockIdx.x * B + threadIdx.x / B;
    const int col = blockIdx.y * B + threadIdx.x % B;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * Bm[k * N + col];
        C[row * N + col] = acc;
    }
}

extern "C" __global__ void gemm_coalesced_yx(const float* A, const float* Bm, float* C, int M, int N, int K)
{
    const int row = blockIdx.y * B + threadIdx.x / B;
    const int col = blockIdx.x * B + threadIdx.x % B;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * Bm[k * N + col];
        C[row * N + col] = acc;
    }
}
