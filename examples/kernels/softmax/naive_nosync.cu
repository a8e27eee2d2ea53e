// Bug: the naive softmax without the barrier between filling the shared
// buffer and summing it: every thread reads the others' buf entries
// unordered with their writes, a data race.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void softmax_naive_nosync(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float buf[N];
    int tid = threadIdx.x;
    buf[tid] = expf(x[tid]);
    float sum = 0.0f;
    for (int i = 0; i < N; ++i)
        sum += buf[i];
    y[tid] = buf[tid] / sum;
}
