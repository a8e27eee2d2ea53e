// Grid-symmetry soundness cases (issue: whole-grid verification with CTA
// classes). Each is the 16 x 16 tiled GEMM of ../sized/gemm.cu with one bug
// that breaks the symmetry between CTAs in a different place; a check that
// verifies one representative CTA per class must still find every one.
//   gemm_edge_drop:   the right-edge CTAs never store their partial tile
//                     (columns past the last multiple of 16): not_equivalent.
//   gemm_clamp_store: stores clamp the column to N - 1 instead of masking,
//                     so an edge CTA's out-of-range threads overwrite column
//                     N - 1 with their zero accumulators: a race between the
//                     threads of one CTA.
//   gemm_cta7:        CTA 7 alone (blockIdx (1, 2) of a 3 x 3 grid) reads A
//                     one column off: an interior CTA unlike its class.
//   gemm_overlap:     CTA x covers columns from 15 x, not 16 x: neighbouring
//                     tiles overlap in one column, which the two CTAs compute
//                     from different columns of B: a race between CTAs.
// Launch: block [16, 16, 1], grid [ceil(N/16), ceil(M/16), 1] (overlap:
// ceil((N - 1) / 15)).
#define T 16

enum Bug { EdgeDrop, ClampStore, Cta7, Overlap };

template <Bug B>
__device__ void gemm_body(const float* A, const float* Bm, float* C, int M, int N, int K)
{
    __shared__ float as[T][T], bs[T][T];
    int ty = threadIdx.y, tx = threadIdx.x;
    int n0 = B == Overlap ? blockIdx.x * (T - 1) : blockIdx.x * T;
    int row = blockIdx.y * T + ty, col = n0 + tx;
    int bcol = B == Overlap ? blockIdx.x * T + tx : col;  // the column of B this thread multiplies
    int shift = (B == Cta7 && blockIdx.y * gridDim.x + blockIdx.x == 7) ? 1 : 0;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += T) {
        int ka = k0 + tx, kb = k0 + ty;
        as[ty][tx] = (row < M && ka + shift < K) ? A[row * K + ka + shift] : 0.0f;
        bs[ty][tx] = (bcol < N && kb < K) ? Bm[kb * N + bcol] : 0.0f;
        __syncthreads();
        for (int k = 0; k < T; ++k) acc += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (B == EdgeDrop) {
        if (row < M && col < N / T * T) C[row * N + col] = acc;
    } else if (B == ClampStore) {
        if (row < M) C[row * N + min(col, N - 1)] = acc;
    } else {
        if (row < M && col < N) C[row * N + col] = acc;
    }
}

extern "C" __global__ void gemm_edge_drop(const float* A, const float* B, float* C, int M, int N, int K)
{ gemm_body<EdgeDrop>(A, B, C, M, N, K); }
extern "C" __global__ void gemm_clamp_store(const float* A, const float* B, float* C, int M, int N, int K)
{ gemm_body<ClampStore>(A, B, C, M, N, K); }
extern "C" __global__ void gemm_cta7(const float* A, const float* B, float* C, int M, int N, int K)
{ gemm_body<Cta7>(A, B, C, M, N, K); }
extern "C" __global__ void gemm_overlap(const float* A, const float* B, float* C, int M, int N, int K)
{ gemm_body<Overlap>(A, B, C, M, N, K); }
