// Kernels with bugs planted in one class of threads of a CTA, for the
// thread-class soundness test (tests/equiv/thread_classes_test.cpp): each
// is gemm_smem32 (examples/kernels/scaling/gemm.cu) or an elementwise
// difference, wrong only in some threads, whose values the other threads'
// expressions must not stand for. Launches as in gemm.cu / their specs.

#define S 32

// The threads with threadIdx.x == 13 multiply by the column of thread 12.
extern "C" __global__ void tc_smem32_badcol(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float at[S][S], bt[S][S];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * S + ty, col = blockIdx.x * S + tx;
    int bx = tx == 13 ? 12 : tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += S) {
        at[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        bt[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S; ++k) acc += at[ty][k] * bt[k][bx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// The threads with threadIdx.y == 9 skip the second tile of K.
extern "C" __global__ void tc_smem32_droptile(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float at[S][S], bt[S][S];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * S + ty, col = blockIdx.x * S + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += S) {
        at[ty][tx] = (row < M && k0 + tx < K) ? A[row * K + k0 + tx] : 0.0f;
        bt[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
        if (!(ty == 9 && k0 == S)) {
#pragma unroll
            for (int k = 0; k < S; ++k) acc += at[ty][k] * bt[k][tx];
        }
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// Off by one at the boundary: the last column of A is never loaded (reads 0).
extern "C" __global__ void tc_smem32_offbyone(const float* A, const float* B, float* C, int M, int N, int K)
{
    __shared__ float at[S][S], bt[S][S];
    int tx = threadIdx.x, ty = threadIdx.y;
    int row = blockIdx.y * S + ty, col = blockIdx.x * S + tx;
    float acc = 0.0f;
    for (int k0 = 0; k0 < K; k0 += S) {
        at[ty][tx] = (row < M && k0 + tx < K - 1) ? A[row * K + k0 + tx] : 0.0f;
        bt[ty][tx] = (k0 + ty < K && col < N) ? B[(k0 + ty) * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < S; ++k) acc += at[ty][k] * bt[k][tx];
        __syncthreads();
    }
    if (row < M && col < N) C[row * N + col] = acc;
}

// Out[i] = (X[i] - Y[i]) * X[i] + Y[i] * Y[i]: one thread per element.
extern "C" __global__ void tc_diff(const float* X, const float* Y, float* Out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float d = X[i] - Y[i];
        Out[i] = d * X[i] + Y[i] * Y[i];
    }
}

// The same, with the difference's operands swapped in the threads with
// threadIdx.x % 8 == 3.
extern "C" __global__ void tc_diff_swapped(const float* X, const float* Y, float* Out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float d = threadIdx.x % 8 == 3 ? Y[i] - X[i] : X[i] - Y[i];
        Out[i] = d * X[i] + Y[i] * Y[i];
    }
}

// The same, reading Y one element further in the threads with threadIdx.x == 37.
extern "C" __global__ void tc_diff_shifted(const float* X, const float* Y, float* Out, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        int j = threadIdx.x == 37 && i + 1 < n ? i + 1 : i;
        float d = X[i] - Y[j];
        Out[i] = d * X[i] + Y[i] * Y[i];
    }
}
