// Red-2: interleaved addressing with a strided index, so the active threads
// are contiguous (no divergence inside a warp, but bank conflicts).
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red2(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        unsigned index = 2 * stride * tid;
        if (index < BLOCK)
            s[index] += s[index + stride];
        __syncthreads();
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
