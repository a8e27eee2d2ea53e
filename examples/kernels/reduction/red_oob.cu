// Bug: the tree starts at stride BLOCK instead of BLOCK/2, so the first step
// reads s[tid + 128], past the end of the shared array: out of bounds.
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red_oob(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = BLOCK; stride > 0; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
