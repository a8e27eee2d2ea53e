// Red-5: Red-4 with the last warp unrolled warp-synchronously: no barrier
// between the steps of the last warp, only `volatile`. Since Volta's
// independent thread scheduling this is a data race (lane t reads s[t+16]
// while lane t+16 may still be writing it).
// Launch: grid [4,1,1], block [64,1,1].
#define ELEMS_PER_CTA 128
#define BLOCK 64

__device__ void warp_reduce(volatile float* s, unsigned tid)
{
    s[tid] += s[tid + 32];
    s[tid] += s[tid + 16];
    s[tid] += s[tid + 8];
    s[tid] += s[tid + 4];
    s[tid] += s[tid + 2];
    s[tid] += s[tid + 1];
}

extern "C" __global__ void red5(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * ELEMS_PER_CTA + tid;
    s[tid] = x[i] + x[i + BLOCK];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 32; stride >>= 1) {
        if (tid < stride)
            s[tid] += s[tid + stride];
        __syncthreads();
    }
    if (tid < 32)
        warp_reduce(s, tid);
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
