// Naive softmax of one row of N values (VOLTA Fig. 1a): every thread
// exponentiates its element into shared memory, then every thread sums the
// whole buffer and normalizes its own element. No max subtraction.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void softmax_naive(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float buf[N];
    int tid = threadIdx.x;
    buf[tid] = expf(x[tid]);
    __syncthreads();
    float sum = 0.0f;
    for (int i = 0; i < N; ++i)
        sum += buf[i];
    y[tid] = buf[tid] / sum;
}
