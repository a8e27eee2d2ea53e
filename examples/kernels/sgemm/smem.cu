// SGEMM with shared-memory cache blocking: the K dimension is walked in tiles
// of BK; each tile of A (64xBK) and B (BKx64) is staged in shared memory by
// all 512 threads, then each thread computes its 4x2 strided outputs from the
// shared tiles.
// Launch: grid [1,1,1], block [32,16,1].
#define M 64
#define N 64
#define K 64
#define BK 16
#define TX 32
#define TY 16
#define THREADS (TX * TY)

extern "C" __global__ void sgemm_smem(const float* __restrict__ A, const float* __restrict__ B,
                                      float* __restrict__ C)
{
    __shared__ float As[M][BK];
    __shared__ float Bs[BK][N];
    unsigned tx = threadIdx.x, ty = threadIdx.y;
    unsigned t = ty * TX + tx;
    float acc[M / TY][N / TX] = {};

    for (unsigned bk = 0; bk < K; bk += BK) {
        for (unsigned i = 0; i < M * BK / THREADS; ++i) {
            unsigned idx = t + i * THREADS;
            As[idx / BK][idx % BK] = A[(idx / BK) * K + bk + idx % BK];
        }
        for (unsigned i = 0; i < BK * N / THREADS; ++i) {
            unsigned idx = t + i * THREADS;
            Bs[idx / N][idx % N] = B[(bk + idx / N) * N + idx % N];
        }
        __syncthreads();
        for (unsigned i = 0; i < M / TY; ++i)
            for (unsigned j = 0; j < N / TX; ++j)
                for (unsigned k = 0; k < BK; ++k)
                    acc[i][j] += As[ty + i * TY][k] * Bs[k][tx + j * TX];
        __syncthreads();
    }
    for (unsigned i = 0; i < M / TY; ++i)
        for (unsigned j = 0; j < N / TX; ++j)
            C[(ty + i * TY) * N + tx + j * TX] = acc[i][j];
}
