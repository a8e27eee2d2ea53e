// tanh three ways: libdevice's tanhf (no fast math: nvcc 13 inlines an
// abs / ex2 / rcp form for |x| >= 0.6 and an odd polynomial below, joined by
// copysign and selects), the sm_75+ hardware approximation tanh.approx.f32
// (what -use_fast_math makes of tanhf), and a bug that uses the sigmoid
// identity with the wrong argument (2*sigmoid(x) - 1 is tanh(x/2)).
// Launch: grid [1,1,1], block [128,1,1]; 256 elements, two per thread.
#define N 256

extern "C" __global__ void tanh_ref(const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = threadIdx.x; i < N; i += blockDim.x) y[i] = tanhf(x[i]);
}

__device__ __forceinline__ float tanh_hw(float v)
{
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(v));
    return r;
}

// Two adjacent elements per thread through one float2 load and store.
extern "C" __global__ void tanh_approx(const float2* __restrict__ x, float2* __restrict__ y)
{
    float2 v = x[threadIdx.x];
    y[threadIdx.x] = make_float2(tanh_hw(v.x), tanh_hw(v.y));
}

extern "C" __global__ void tanh_sigmoid_bug(const float* __restrict__ x, float* __restrict__ y)
{
    for (int i = threadIdx.x; i < N; i += blockDim.x) y[i] = 2.0f / (1.0f + expf(-x[i])) - 1.0f;
}
