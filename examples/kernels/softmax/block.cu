// Block-parallel, max-subtracted softmax: a shared-memory tree reduction of
// the max, then each thread exponentiates x - max, then a tree reduction of
// the sum; every tree step is separated by a barrier.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128

extern "C" __global__ void softmax_block(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float smax[N];
    __shared__ float ssum[N];
    unsigned tid = threadIdx.x;
    float v = x[tid];
    smax[tid] = v;
    __syncthreads();
    for (unsigned stride = N / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            smax[tid] = fmaxf(smax[tid], smax[tid + stride]);
        __syncthreads();
    }
    float e = expf(v - smax[0]);
    ssum[tid] = e;
    __syncthreads();
    for (unsigned stride = N / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            ssum[tid] += ssum[tid + stride];
        __syncthreads();
    }
    y[tid] = e / ssum[0];
}
