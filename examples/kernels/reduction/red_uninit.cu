// Bug: only the first half of the block stores its value to shared memory,
// so the tree reads s[64..127] before anything was written: uninitialized.
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red_uninit(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    if (tid < BLOCK / 2)
        s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
