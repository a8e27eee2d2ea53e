// A broken tiled SGEMM for the deadline tests of the whole-grid check
// (issue 31): gemm_smem32 of gemm.cu with blockIdx.x and blockIdx.y swapped
// in the store, so that CTA (bx, by) writes its 32 x 32 tile of C at the
// tile position (by, bx): the tile grid of C transposed. The values are
// right, their places are not, except in the CTAs of the diagonal, CTA
// (0, 0) among them, which is the one a one-CTA check looks at.
// C[M,N] = A[M,K] * B[K,N], row-major f32; meant for M = N (with M != N the
// masked store still stays inside C, but the answer is as wrong).
//   gemm_smem32_tstore: launch block [32, 32, 1], grid [ceil(N/32), ceil(M/32), 1].

#define S 32

extern "C" __global__ void gemm_smem32_tstore(const float* A, const float* B, float* C, int M, int N, int K)
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
    // The bug: the tile's place with the block indices swapped.
    int srow = blockIdx.x * S + ty, scol = blockIdx.y * S + tx;
    if (srow < M && scol < N) C[srow * N + scol] = acc;
}
