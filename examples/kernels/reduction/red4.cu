// Red-4: first add during the global load; 64 threads each load two values.
// Launch: grid [4,1,1], block [64,1,1].
#define ELEMS_PER_CTA 128
#define BLOCK 64

extern "C" __global__ void red4(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * ELEMS_PER_CTA + tid;
    s[tid] = x[i] + x[i + BLOCK];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
