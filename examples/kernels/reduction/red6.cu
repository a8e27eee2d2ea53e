// Red-6: completely unrolled for a compile-time block size; the tree steps
// that do not apply to BLOCK fold away, and the last warp is warp-synchronous
// as in Red-5 (a data race).
// Launch: grid [4,1,1], block [64,1,1].
#define ELEMS_PER_CTA 128
#define BLOCK 64

extern "C" __global__ void red6(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    unsigned i = blockIdx.x * ELEMS_PER_CTA + tid;
    s[tid] = x[i] + x[i + BLOCK];
    __syncthreads();
    if (BLOCK >= 512) { if (tid < 256) s[tid] += s[tid + 256]; __syncthreads(); }
    if (BLOCK >= 256) { if (tid < 128) s[tid] += s[tid + 128]; __syncthreads(); }
    if (BLOCK >= 128) { if (tid < 64)  s[tid] += s[tid + 64];  __syncthreads(); }
    if (tid < 32) {
        volatile float* v = s;
        if (BLOCK >= 64) v[tid] += v[tid + 32];
        if (BLOCK >= 32) v[tid] += v[tid + 16];
        if (BLOCK >= 16) v[tid] += v[tid + 8];
        if (BLOCK >= 8)  v[tid] += v[tid + 4];
        if (BLOCK >= 4)  v[tid] += v[tid + 2];
        if (BLOCK >= 2)  v[tid] += v[tid + 1];
    }
    if (tid == 0)
        y[blockIdx.x] = s[0];
}
