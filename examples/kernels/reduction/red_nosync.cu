// Bug: Red-3 without the barrier inside the tree loop, so a thread reads
// s[tid + stride] while its owner may still be adding into it: a data race.
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red_nosync(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
    }
    __syncthreads();
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
