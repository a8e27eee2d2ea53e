// One kernel per CUDA math function whose nvcc 13 expansion the lowering
// recognises (src/ptx/lower_math.cpp), plus fast-math and rewritten forms
// that must meet them. nvcc -O3 -arch=sm_90 -ptx math_forms.cu
extern "C" __global__ void m_tanh(const float* x, float* y) { int i = threadIdx.x; y[i] = tanhf(x[i]); }
extern "C" __global__ void m_erf(const float* x, float* y) { int i = threadIdx.x; y[i] = erff(x[i]); }
extern "C" __global__ void m_log(const float* x, float* y) { int i = threadIdx.x; y[i] = logf(x[i]); }
extern "C" __global__ void m_log2(const float* x, float* y) { int i = threadIdx.x; y[i] = log2f(x[i]); }
extern "C" __global__ void m_log1p(const float* x, float* y) { int i = threadIdx.x; y[i] = log1pf(x[i]); }
// log(x) from the fast-math intrinsic: lg2.approx times ln 2
extern "C" __global__ void m_fast_log(const float* x, float* y) { int i = threadIdx.x; y[i] = __logf(x[i]); }
extern "C" __global__ void m_fast_log2(const float* x, float* y) { int i = threadIdx.x; y[i] = __log2f(x[i]); }
// nvcc sinks the product into logf's form (between its last
// branch and its select): recognised as the form plus a mul.
extern "C" __global__ void m_log_log2e(const float* x, float* y) { int i = threadIdx.x; y[i] = logf(x[i]) * 1.44269504f; }
extern "C" __global__ void m_log_1p(const float* x, float* y) { int i = threadIdx.x; y[i] = logf(1.0f + x[i]); }
extern "C" __global__ void m_tanh_hw(const float* x, float* y)
{
    int i = threadIdx.x;
    float r;
    asm("tanh.approx.f32 %0, %1;" : "=f"(r) : "f"(x[i]));
    y[i] = r;
}
// -logf(x) (a negative log-likelihood): nvcc sinks the negation into the
// form (and selects +inf at 0); recognised as the form plus a neg.
extern "C" __global__ void m_neg_log(const float* x, float* y) { int i = threadIdx.x; y[i] = -logf(x[i]); }
// A product by a negative constant sunk into the form: not recognised.
extern "C" __global__ void m_log_negscale(const float* x, float* y) { int i = threadIdx.x; y[i] = logf(x[i]) * -2.0f; }
