// Red-7: several elements per thread (a fixed-trip strided loop), then the
// Red-6 tail with its warp-synchronous last warp (a data race).
// Launch: grid [4,1,1], block [64,1,1].
#define ELEMS_PER_CTA 128
#define BLOCK 64

extern "C" __global__ void red7(const float* __restrict__ x, float* __restrict__ y)
{
    __shared__ float s[BLOCK];
    unsigned tid = threadIdx.x;
    const float* p = x + blockIdx.x * ELEMS_PER_CTA;
    float sum = 0.0f;
    for (unsigned i = tid; i < ELEMS_PER_CTA; i += BLOCK)
        sum += p[i];
    s[tid] = sum;
    __syncthreads();
    if (tid < 32) {
        volatile float* v = s;
        v[tid] = sum = sum + v[tid + 32];
        v[tid] = sum = sum + v[tid + 16];
        v[tid] = sum = sum + v[tid + 8];
        v[tid] = sum = sum + v[tid + 4];
        v[tid] = sum = sum + v[tid + 2];
        v[tid] = sum = sum + v[tid + 1];
    }
    if (tid == 0)
        y[blockIdx.x] = sum;
}
