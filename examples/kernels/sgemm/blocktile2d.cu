// SGEMM with 2D block tiling: BK = 16, each of the 256 threads computes a
// TM x TN = 4x4 block of outputs as outer products of a column of the A tile
// and a row of the B tile, both cached in registers.
// Launch: grid [1,1,1], block [256,1,1].
#define M 64
#define N 64
#define K 64
#define BK 16
#define TM 4
#define TN 4
#define THREADS ((M / TM) * (N / TN))

extern "C" __global__ void sgemm_blocktile2d(const float* __restrict__ A, const float* __restrict__ B,
                                             float* __restrict__ C)
{
    __shared__ float As[M * BK];
    __shared__ float Bs[BK * N];
    unsigned t = threadIdx.x;
    unsigned threadCol = t % (N / TN);
    unsigned threadRow = t / (N / TN);
    unsigned innerRowA = t / BK, innerColA = t % BK;
    unsigned innerRowB = t / N, innerColB = t % N;
    const unsigned strideA = THREADS / BK;  // rows of the A tile loaded per pass
    const unsigned strideB = THREADS / N;   // rows of the B tile loaded per pass
    float acc[TM][TN] = {};
    float regM[TM], regN[TN];

    for (unsigned bk = 0; bk < K; bk += BK) {
        for (unsigned off = 0; off < M; off += strideA)
            As[(innerRowA + off) * BK + innerColA] = A[(innerRowA + off) * K + bk + innerColA];
        for (unsigned off = 0; off < BK; off += strideB)
            Bs[(innerRowB + off) * N + innerColB] = B[(bk + innerRowB + off) * N + innerColB];
        __syncthreads();
        for (unsigned dot = 0; dot < BK; ++dot) {
            for (unsigned i = 0; i < TM; ++i)
                regM[i] = As[(threadRow * TM + i) * BK + dot];
            for (unsigned j = 0; j < TN; ++j)
                regN[j] = Bs[dot * N + threadCol * TN + j];
            for (unsigned i = 0; i < TM; ++i)
                for (unsigned j = 0; j < TN; ++j)
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < TM; ++i)
        for (unsigned j = 0; j < TN; ++j)
            C[(threadRow * TM + i) * N + threadCol * TN + j] = acc[i][j];
}
