// RMSNorm of one row of 128: y = x / sqrt(mean(x^2) + eps) * g.
// rmsnorm_ref divides by sqrtf (IEEE sqrt.rn, div.rn); rmsnorm_rsqrt
// multiplies by rsqrtf after a warp-shuffle and shared-memory reduction;
// rmsnorm_nosqrt the bug of dividing by the mean square itself.
// Launch: grid [1,1,1], block [128,1,1].
#define N 128
#define EPS 1e-5f

extern "C" __global__ void rmsnorm_ref(const float* __restrict__ x, const float* __restrict__ g, float* __restrict__ y)
{
    float ss = 0.0f;
    for (int j = 0; j < N; ++j) ss += x[j] * x[j];
    int i = threadIdx.x;
    y[i] = x[i] / sqrtf(ss / N + EPS) * g[i];
}

__device__ __forceinline__ float block_sum(float v, float* sh)
{
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) sh[threadIdx.x >> 5] = v;
    __syncthreads();
    return sh[0] + sh[1] + sh[2] + sh[3];
}

extern "C" __global__ void rmsnorm_rsqrt(const float* __restrict__ x, const float* __restrict__ g, float* __restrict__ y)
{
    __shared__ float sh[4];
    int i = threadIdx.x;
    float v = x[i];
    float ss = block_sum(v * v, sh);
    y[i] = v * rsqrtf(ss * (1.0f / N) + EPS) * g[i];
}

extern "C" __global__ void rmsnorm_nosqrt(const float* __restrict__ x, const float* __restrict__ g, float* __restrict__ y)
{
    __shared__ float sh[4];
    int i = threadIdx.x;
    float v = x[i];
    float ss = block_sum(v * v, sh);
    y[i] = v / (ss * (1.0f / N) + EPS) * g[i];
}
