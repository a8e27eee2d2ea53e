// SGEMM with 2D block tiling and 128-bit accesses: each thread loads one
// float4 of the A tile (stored transposed into As so the compute loop reads
// it contiguously) and one float4 of the B tile, reads its TM/TN registers
// with float4 shared loads, and stores C with float4 stores.
// Launch: grid [1,1,1], block [256,1,1].
#define M 64
#define N 64
#define K 64
#define BK 16
#define TM 4
#define TN 4

extern "C" __global__ void sgemm_vectorized(const float* __restrict__ A, const float* __restrict__ B,
                                            float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK * M];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK * N];
    unsigned t = threadIdx.x;
    unsigned threadCol = t % (N / TN);
    unsigned threadRow = t / (N / TN);
    unsigned innerRowA = t / (BK / 4), innerColA = t % (BK / 4);
    unsigned innerRowB = t / (N / 4), innerColB = t % (N / 4);
    float acc[TM][TN] = {};

    for (unsigned bk = 0; bk < K; bk += BK) {
        float4 a = *reinterpret_cast<const float4*>(&A[innerRowA * K + bk + innerColA * 4]);
        As[(innerColA * 4 + 0) * M + innerRowA] = a.x;
        As[(innerColA * 4 + 1) * M + innerRowA] = a.y;
        As[(innerColA * 4 + 2) * M + innerRowA] = a.z;
        As[(innerColA * 4 + 3) * M + innerRowA] = a.w;
        *reinterpret_cast<float4*>(&Bs[innerRowB * N + innerColB * 4]) =
            *reinterpret_cast<const float4*>(&B[(bk + innerRowB) * N + innerColB * 4]);
        __syncthreads();
        for (unsigned dot = 0; dot < BK; ++dot) {
            float4 m = *reinterpret_cast<const float4*>(&As[dot * M + threadRow * TM]);
            float4 n = *reinterpret_cast<const float4*>(&Bs[dot * N + threadCol * TN]);
            float regM[TM] = {m.x, m.y, m.z, m.w};
            float regN[TN] = {n.x, n.y, n.z, n.w};
            for (unsigned i = 0; i < TM; ++i)
                for (unsigned j = 0; j < TN; ++j)
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
    for (unsigned i = 0; i < TM; ++i)
        *reinterpret_cast<float4*>(&C[(threadRow * TM + i) * N + threadCol * TN]) =
            make_float4(acc[i][0], acc[i][1], acc[i][2], acc[i][3]);
}
