// Size-parametric SGEMM for the whole-grid scaling benchmark:
// C[M,N] = A[M,K] * B[K,N], row-major f32, M, N, K runtime arguments. Every
// kernel gives each element of C one accumulator that starts at 0 and adds
// A[row][k] * B[k][col] for k = 0, 1, ..., in that order (the tiled kernels
// add 0 * 0 past K, where their zero-filled loads run off A and B).
//   gemm_naive:  one thread per element of C.
//                Launch: block [32, 32, 1], grid [ceil(N/32), ceil(M/32), 1].
//   gemm_smem32: 32 x 32 tiles of C, one thread per element; K in steps of
//                32 through two 32 x 32 shared tiles of A and B; loads
//                outside A or B read 0, stores are masked.
//                Launch: block [32, 32, 1], grid [ceil(N/32), ceil(M/32), 1].
//   gemm_reg64:  64 x 64 tiles of C, 256 threads, each holding a 4 x 4 block
//                of C in registers; K in steps of 16 through shared memory
//                (A's tile stored k-major), each k an outer product of 4
//                values of A's column and 4 of B's row read into registers;
//                loads outside A or B read 0, stores are masked.
//                Launch: block [256, 1, 1], grid [ceil(N/64), ceil(M/64), 1].
// Correct at every M, N, K >= 1.

extern "C" __global__ void gemm_naive(const float* A, const float* B, float* C, int M, int N, int K)
{
    int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    if (row < M && col < N) {
        float acc = 0.0f;
        for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}

#define S 32

extern "C" __global__ void gemm_smem32(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float at[S][S], bt[S][S];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * S + ty, col = blockIdx.x * S + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += S) {
        at[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        bt[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S; ++k) acc += at[ty][k] * bt[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

#define BM 64
#define BN 64
#define BK 16
#define TM 4
#define TN 4
#define THREADS 256  // (BM / TM) * (BN / TN)

extern "C" __global__ void gemm_reg64(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float as[BK][BM];  // as[k][m] = A[m0 + m][k0 + k]
    __shared__ float bs[BK][BN];  // bs[k][n] = B[k0 + k][n0 + n]
    int t = threadIdx.x;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
    int tr = t / (BN / TN), tc = t % (BN / TN);  // this thread's 4 x 4 block of the tile
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];

    for (int k0 = 0; k0 < K; k0 += BK) {
        // BM * BK = BK * BN = 1024 values per tile: 4 per thread of each.
#pragma unroll
        for (int i = 0; i < BM * BK / THREADS; ++i) {
            int e = t + i * THREADS;
            int m = e / BK, k = e % BK;  // consecutive threads walk along a row of A
            int gm = m0 + m, gk = k0 + k;
            as[k][m] = (gm < M && gk < K) ? A[gm * K + gk] : 0.0f;
        }
#pragma unroll
        for (int i = 0; i < BK * BN / THREADS; ++i) {
            int e = t + i * THREADS;
            int k = e / BN, n = e % BN;  // ... and along a row of B
            int gk = k0 + k, gn = n0 + n;
            bs[k][n] = (gk < K && gn < N) ? B[gk * N + gn] : 0.0f;
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
#pragma unroll
            for (int i = 0; i < TM; ++i) regM[i] = as[k][tr * TM + i];
#pragma unroll
            for (int j = 0; j < TN; ++j) regN[j] = bs[k][tc * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i) {
        int gm = m0 + tr * TM + i;
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            int gn = n0 + tc * TN + j;
            if (gm < M && gn < N) C[gm * N + gn] = acc[i][j];
        }
    }
}
