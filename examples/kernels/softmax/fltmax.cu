// Softmax of one row of N values that also stores the row's maximum (as
// attention kernels keep it for the backward pass), its running max started
// at -FLT_MAX instead of -INFINITY, as LLM-written kernels often start it.
// Every input is a finite f32, so max(-FLT_MAX, x...) is max(x...): the
// decider proves the pair equivalent (docs/decide.md, "Finite inputs").
//   softmax_max_ref:    one thread per element; every thread scans the row
//                       for its max from x[0], exponentiates and sums.
//   softmax_max_fltmax: warp shuffles, then one value per warp in shared
//                       memory, each reduction starting from -FLT_MAX.
// Launch: grid [1,1,1], block [128,1,1].
#include <cfloat>
#define N 128

extern "C" __global__ void softmax_max_ref(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ rowmax)
{
    int tid = threadIdx.x;
    float m = x[0];
    for (int i = 1; i < N; ++i) m = fmaxf(m, x[i]);
    float sum = 0.0f;
    for (int i = 0; i < N; ++i) sum += expf(x[i] - m);
    y[tid] = expf(x[tid] - m) / sum;
    if (tid == 0) rowmax[0] = m;
}

extern "C" __global__ void softmax_max_fltmax(const float* __restrict__ x, float* __restrict__ y, float* __restrict__ rowmax)
{
    __shared__ float wmax[N / 32], wsum[N / 32];
    int tid = threadIdx.x, lane = tid % 32, warp = tid / 32;
    float v = x[tid];
    float m = -FLT_MAX;
    m = fmaxf(m, v);
    for (int o = 16; o > 0; o >>= 1) m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, o));
    if (lane == 0) wmax[warp] = m;
    __syncthreads();
    m = -FLT_MAX;
    for (int w = 0; w < N / 32; ++w) m = fmaxf(m, wmax[w]);
    float e = expf(v - m);
    float s = e;
    for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
    if (lane == 0) wsum[warp] = s;
    __syncthreads();
    float sum = 0.0f;
    for (int w = 0; w < N / 32; ++w) sum += wsum[w];
    y[tid] = e / sum;
    if (tid == 0) rowmax[0] = m;
}
