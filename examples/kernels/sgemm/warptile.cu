// SGEMM with warp tiling: 4 warps split the 64x64 tile into 2x2 warp tiles of
// 32x32; inside a warp tile each lane computes WNITER = 2 sub-tiles of
// TM x TN = 4x4 (lanes form an 8 x 4 grid over a 32 x 16 sub-tile). Tiles of
// A (transposed) and B are staged in shared memory with float4 loads.
// Launch: grid [1,1,1], block [128,1,1].
#define M 64
#define N 64
#define K 64
#define BK 16
#define THREADS 128
#define WM 32
#define WN 32
#define WMITER 1
#define WNITER 2
#define TM 4
#define TN 4
#define WSUBM (WM / WMITER)       // 32
#define WSUBN (WN / WNITER)       // 16
#define LANE_COLS (WSUBN / TN)    // 4
#define WARPS_N (N / WN)          // 2

extern "C" __global__ void sgemm_warptile(const float* __restrict__ A, const float* __restrict__ B,
                                          float* __restrict__ C)
{
    __shared__ __align__(16) float As[BK * M];  // transposed: As[k][m]
    __shared__ __align__(16) float Bs[BK * N];
    unsigned t = threadIdx.x;
    unsigned warp = t / 32, lane = t % 32;
    unsigned warpRow = warp / WARPS_N, warpCol = warp % WARPS_N;
    unsigned laneRow = lane / LANE_COLS, laneCol = lane % LANE_COLS;
    unsigned innerRowA = t / (BK / 4), innerColA = t % (BK / 4);
    unsigned innerRowB = t / (N / 4), innerColB = t % (N / 4);
    const unsigned strideA = THREADS / (BK / 4);  // 32 rows of A per pass
    const unsigned strideB = THREADS / (N / 4);   // 8 rows of B per pass
    float acc[WMITER * TM][WNITER * TN] = {};
    float regM[WMITER * TM], regN[WNITER * TN];

    for (unsigned bk = 0; bk < K; bk += BK) {
        for (unsigned off = 0; off < M; off += strideA) {
            float4 a = *reinterpret_cast<const float4*>(&A[(innerRowA + off) * K + bk + innerColA * 4]);
            As[(innerColA * 4 + 0) * M + innerRowA + off] = a.x;
            As[(innerColA * 4 + 1) * M + innerRowA + off] = a.y;
            As[(innerColA * 4 + 2) * M + innerRowA + off] = a.z;
            As[(innerColA * 4 + 3) * M + innerRowA + off] = a.w;
        }
        for (unsigned off = 0; off < BK; off += strideB)
            *reinterpret_cast<float4*>(&Bs[(innerRowB + off) * N + innerColB * 4]) =
                *reinterpret_cast<const float4*>(&B[(bk + innerRowB + off) * N + innerColB * 4]);
        __syncthreads();
        for (unsigned dot = 0; dot < BK; ++dot) {
            for (unsigned wm = 0; wm < WMITER; ++wm)
                for (unsigned i = 0; i < TM; ++i)
                    regM[wm * TM + i] = As[dot * M + warpRow * WM + wm * WSUBM + laneRow * TM + i];
            for (unsigned wn = 0; wn < WNITER; ++wn)
                for (unsigned j = 0; j < TN; ++j)
                    regN[wn * TN + j] = Bs[dot * N + warpCol * WN + wn * WSUBN + laneCol * TN + j];
            for (unsigned i = 0; i < WMITER * TM; ++i)
                for (unsigned j = 0; j < WNITER * TN; ++j)
                    acc[i][j] += regM[i] * regN[j];
        }
        __syncthreads();
    }
    for (unsigned wm = 0; wm < WMITER; ++wm)
        for (unsigned wn = 0; wn < WNITER; ++wn)
            for (unsigned i = 0; i < TM; ++i) {
                unsigned row = warpRow * WM + wm * WSUBM + laneRow * TM + i;
                unsigned col = warpCol * WN + wn * WSUBN + laneCol * TN;
                const float* a = acc[wm * TM + i] + wn * TN;
                *reinterpret_cast<float4*>(&C[row * N + col]) = make_float4(a[0], a[1], a[2], a[3]);
            }
}
