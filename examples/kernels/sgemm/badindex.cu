// Bug: 1D block tiling whose A-tile load forgets the K-tile offset bk, so
// every K tile multiplies the first 8 columns of A: not equivalent.
// Launch: grid [1,1,1], block [512,1,1].
#define M 64
#define N 64
#define K 64
#define BK 8
#define TM 8

extern "C" __global__ void sgemm_badindex(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C)
{
    __shared__ float As[M * BK];
    __shared__ float Bs[BK * N];
    unsigned t = threadIdx.x;
    unsigned threadCol = t % N;
    unsigned threadRow = t / N;
    unsigned innerRowA = t / BK, innerColA = t % BK;
    unsigned innerRowB = t / N, innerColB = t % N;
    float acc[TM] = {};

    for (unsigned bk = 0; bk < K; bk += BK) {
        As[innerRowA * BK + innerColA] = A[innerRowA * K + innerColA];  // should be + bk
        Bs[innerRowB * N + innerColB] = B[(bk + innerRowB) * N + innerColB];
        __syncthreads();
        for (unsigned dot = 0; dot < BK; ++dot) {
            float b = Bs[dot * N + threadCol];
            for (unsigned i = 0; i < TM; ++i)
                acc[i] += As[(threadRow * TM + i) * BK + dot] * b;
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < TM; ++i)
        C[(threadRow * TM + i) * N + threadCol] = acc[i];
}
