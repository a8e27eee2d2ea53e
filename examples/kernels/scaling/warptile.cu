// Warp-tiled SGEMM in the style of the public "warptiling" kernels (a
// 128 x 128 CTA tile, 8 x 8 outputs per thread, float4 loads, A stored
// transposed in shared memory), written for the scaling benchmark of
// issue 33: C[M,N] = A[M,K] * B[K,N], row-major f32, gemm.cu's arguments,
// checked against gemm.cu's gemm_naive.
//
//   gemm_warptile:       256 threads = 8 warps, each warp a 64 x 32 part of
//                        the 128 x 128 tile (2 warps down, 4 across); a warp
//                        sweeps its part in 2 x 2 steps of 32 x 16, in each
//                        of which a lane holds a 4 x 4 block (lanes 8 down,
//                        4 across), so every thread owns 8 x 8 outputs in
//                        four 4 x 4 blocks. K in steps of BK = 8: each thread
//                        loads one float4 of A (a row's 4 consecutive k) and
//                        one of B (a k's 4 consecutive columns); A's goes
//                        into shared memory transposed (as[k][m]) so that
//                        the inner loop reads both operands as float4.
//                        Launch: block [256, 1, 1], grid [ceil(N/128), ceil(M/128), 1].
//   gemm_warptile_lane3: the planted bug: the transposed store of A's float4
//                        puts the row's third value (k + 2) where the fourth
//                        (k + 3) belongs, so every k = 3 mod 4 uses A[m][k - 1].
//
// Sizes: any M >= 1; N and K multiples of 4 (a float4 of a row of A or B
// must lie inside the row and be 16-byte aligned, as the public kernels
// assume). A float4 that lies outside A or B reads 0 (whole, which is exact
// because N and K are multiples of 4); stores are masked by row and column.
// Each element of C is one fma chain over k = 0, 1, ... in order, like
// gemm_naive's, plus 0 * 0 past K in the last, partial K step.

#define BM 128
#define BN 128
#define BK 8
#define THREADS 256
#define WM 64   // a warp's part of the tile: 64 rows ...
#define WN 32   // ... by 32 columns
#define SUBM 32 // one of the warp's 2 x 2 steps: 8 lanes of 4 rows ...
#define SUBN 16 // ... by 4 lanes of 4 columns

template <bool LANE3_BUG>
__device__ void warptile(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float4 as4[BK][BM / 4];  // as[k][m] = A[m0 + m][k0 + k]
    __shared__ float4 bs4[BK][BN / 4];  // bs[k][n] = B[k0 + k][n0 + n]
    float* as = reinterpret_cast<float*>(as4);
    const int t = threadIdx.x, warp = t / 32, lane = t % 32;
    const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    // Which float4 of each operand this thread loads in every K step: A's
    // tile is 128 rows of 2 float4, B's 8 rows of 32 float4.
    const int a_row = t / 2, a_k = (t % 2) * 4;
    const int b_k = t / 32, b_col = (t % 32) * 4;

    // This thread's outputs: rows wr + i * SUBM + lr + r, columns
    // wc + j * SUBN + lc + c for i, j in {0, 1} and r, c in 0..3.
    const int wr = (warp / (BN / WN)) * WM, wc = (warp % (BN / WN)) * WN;
    const int lr = (lane / (SUBN / 4)) * 4, lc = (lane % (SUBN / 4)) * 4;

    float acc[2][2][4][4] = {};
    for (int k0 = 0; k0 < K; k0 += BK) {
        const int ga = m0 + a_row, gak = k0 + a_k;
        float4 a = (ga < M && gak < K) ? *reinterpret_cast<const float4*>(&A[(long)ga * K + gak])
                                       : make_float4(0.f, 0.f, 0.f, 0.f);
        as[(a_k + 0) * BM + a_row] = a.x;
        as[(a_k + 1) * BM + a_row] = a.y;
        as[(a_k + 2) * BM + a_row] = a.z;
        as[(a_k + 3) * BM + a_row] = LANE3_BUG ? a.z : a.w;
        const int gbk = k0 + b_k, gb = n0 + b_col;
        bs4[b_k][b_col / 4] = (gbk < K && gb < N) ? *reinterpret_cast<const float4*>(&B[(long)gbk * N + gb])
                                                  : make_float4(0.f, 0.f, 0.f, 0.f);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 ra[2], rb[2];
#pragma unroll
            for (int i = 0; i < 2; ++i) ra[i] = as4[k][(wr + i * SUBM + lr) / 4];
#pragma unroll
            for (int j = 0; j < 2; ++j) rb[j] = bs4[k][(wc + j * SUBN + lc) / 4];
#pragma unroll
            for (int i = 0; i < 2; ++i)
#pragma unroll
                for (int j = 0; j < 2; ++j) {
                    const float av[4] = {ra[i].x, ra[i].y, ra[i].z, ra[i].w};
                    const float bv[4] = {rb[j].x, rb[j].y, rb[j].z, rb[j].w};
#pragma unroll
                    for (int r = 0; r < 4; ++r)
#pragma unroll
                        for (int c = 0; c < 4; ++c) acc[i][j][r][c] += av[r] * bv[c];
                }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j)
#pragma unroll
            for (int r = 0; r < 4; ++r) {
                const int row = m0 + wr + i * SUBM + lr + r, col = n0 + wc + j * SUBN + lc;
                if (row < M && col < N)
                    *reinterpret_cast<float4*>(&C[(long)row * N + col]) =
                        make_float4(acc[i][j][r][0], acc[i][j][r][1], acc[i][j][r][2], acc[i][j][r][3]);
            }
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_warptile(const float* A, const float* B, float* C, int M, int N, int K)
{
    warptile<false>(A, B, C, M, N, K);
}

extern "C" __global__ void __launch_bounds__(THREADS)
gemm_warptile_lane3(const float* A, const float* B, float* C, int M, int N, int K)
{
    warptile<true>(A, B, C, M, N, K);
}
