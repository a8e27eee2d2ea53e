// SGEMM reference, C = A * B for one 64x64 output tile with K = 64, all
// row-major (A is MxK, B is KxN, C is MxN). 256 threads; thread t owns column
// t % 64 and rows t / 64, t / 64 + 4, ... (16 outputs), each a plain dot
// product read straight from global memory (coalesced across the warp).
// Launch: grid [1,1,1], block [256,1,1].
#define M 64
#define N 64
#define K 64
#define THREADS 256

extern "C" __global__ void sgemm_naive(const float* __restrict__ A, const float* __restrict__ B,
                                       float* __restrict__ C)
{
    unsigned col = threadIdx.x % N;
    unsigned row0 = threadIdx.x / N;
#pragma unroll 1
    for (unsigned row = row0; row < M; row += THREADS / N) {
        float acc = 0.0f;
        for (unsigned k = 0; k < K; ++k)
            acc += A[row * K + k] * B[k * N + col];
        C[row * N + col] = acc;
    }
}
