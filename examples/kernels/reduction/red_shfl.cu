// Shared-memory tree down to 64 partial sums, then the last warp finishes with
// __shfl_down_sync, which synchronizes the warp: well synchronized.
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red_shfl(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        float v = s[tid] + s[tid + 32];
        for (int offset = 16; offset > 0; offset >>= 1)
            v += __shfl_down_sync(0xffffffffu, v, offset);
        if (tid == 0)
            y[blockIdx.x] = v;
    }
}
