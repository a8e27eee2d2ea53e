// Bug: the barrier of each tree step sits inside `if (tid < stride)`, so the
// idle threads run ahead to the final barrier while the active ones wait at
// the inner one: the two groups wait at different barriers (deadlock in the
// structured-CTA semantics; undefined behaviour in CUDA).
// Launch: grid [4,1,1], block [128,1,1].
#define BLOCK 128

extern "C" __global__ void red_deadlock(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    s[tid] = x[blockIdx.x * BLOCK + tid];
    __syncthreads();
    for (unsigned stride = BLOCK / 2; stride > 0; stride >>= 1) {
        if (tid < stride) {
            s[tid] += s[tid + stride];
            __syncthreads();
        }
    }
    __syncthreads();
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
