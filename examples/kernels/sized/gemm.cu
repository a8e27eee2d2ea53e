// Size-parametric GEMM for boundary-shape suites: C[M,N] = A[M,K] * B[K,N],
// row-major f32, every size a runtime argument.
//   gemm_ref:   one thread per element of C, the naive K loop.
//   gemm_tiled: 16 x 16 tiles of C, K in steps of 16 through shared memory,
//               loads outside A or B filled with 0, stores masked: correct at
//               every size.
//   gemm_tiled_nomask_k: the same without the mask on K (a K tile that runs
//               past K reads the next row of A, or past B's end):
//               correct only when K is a multiple of 16.
// Launch: block [16, 16, 1], grid [ceil(N/16), ceil(M/16), 1].
#define T 16

extern "C" __global__ void gemm_ref(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * T + threadIdx.y, col = blockIdx.x * T + threadIdx.x;
    if (row >= M || col >= N) return;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

template <bool MaskK>
__device__ void gemm_tiled_body(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float as[T][T], bs[T][T];
    int ty = threadIdx.y, tx = threadIdx.x;
    int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int ka = k0 + tx, kb = k0 + ty;
        as[ty][tx] = (row < M && (!MaskK || ka < K)) ? A[row * K + ka] : 0.0f;
        bs[ty][tx] = (col < N && (!MaskK || kb < K)) ? B[kb * N + col] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

extern "C" __global__ void gemm_tiled(const float* A, const float* B, float* C, int M, int N, int K)
{
    gemm_tiled_body<true>(A, B, C, M, N, K);
}

extern "C" __global__ void gemm_tiled_nomask_k(const float* A, const float* B, float* C, int M, int N, int K)
{
    gemm_tiled_body<false>(A, B, C, M, N, K);
}
