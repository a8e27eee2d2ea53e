// GELU with erf, as PyTorch's exact GELU: 0.5 x (1 + erf(x / sqrt 2)).
// gelu_ref is the textbook form; gelu_vec the same function computed another
// way (float4 loads, h = x/2 and y = h + h * erf(..) as one fma); gelu_nohalf
// the bug of a missing 0.5; gelu_tanh the tanh approximation, a different
// function. Launch: grid [1,1,1], block [64,1,1]; 256 elements.
#define N 256
#define RSQRT2 0.70710678118654752f

extern "C" __global__ void gelu_ref(const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + erff(v * RSQRT2));
    }
}

__device__ __forceinline__ float gelu_fma(float v)
{
    float h = 0.5f * v;
    return fmaf(h, erff(v * RSQRT2), h);
}

extern "C" __global__ void gelu_vec(const float4* __restrict__ x, float4* __restrict__ y)
{
    float4 v = x[threadIdx.x];
    y[threadIdx.x] = make_float4(gelu_fma(v.x), gelu_fma(v.y), gelu_fma(v.z), gelu_fma(v.w));
}

extern "C" __global__ void gelu_nohalf(const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        float v = x[i];
        y[i] = v * (1.0f + erff(v * RSQRT2));
    }
}

extern "C" __global__ void gelu_tanh(const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = threadIdx.x; i < N; i += blockDim.x) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
    }
}
