// Softmax of one row scaled by 1/sqrt(D), as attention scales its scores,
// written four ways. nvcc folds SCALE * LOG2E, both written in the source,
// into one rounded f32 constant (0f3E8293EE at D = 32); the reference's
// expf multiplies by SCALE and by log2(e) separately. Build with -DD=32, 64
// or 128 (README.md). One thread: grid [1,1,1], block [1,1,1].
#ifndef D
#define D 32
#endif
#define N 32
#define SCALE (1.0f / sqrtf((float)D))
#define LOG2E 1.4426950408889634f

// y = softmax(x * SCALE) with expf.
extern "C" __global__ void softmax_ref(const float* __restrict__ x, float* __restrict__ y)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    float e[N], l = 0.0f;
    for (int i = 0; i < N; ++i) {
        e[i] = expf((x[i] - m) * SCALE);
        l += e[i];
    }
    for (int i = 0; i < N; ++i) y[i] = e[i] / l;
}

// The same with exp2f and the folded constant SCALE * LOG2E, as
// FlashAttention writes it (scores * scale_log2 - max * scale_log2).
extern "C" __global__ void softmax_exp2(const float* __restrict__ x, float* __restrict__ y)
{
    const float scale_log2 = SCALE * LOG2E;
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    const float m_scaled = m * scale_log2;
    float e[N], l = 0.0f;
    for (int i = 0; i < N; ++i) {
        e[i] = exp2f(x[i] * scale_log2 - m_scaled);
        l += e[i];
    }
    for (int i = 0; i < N; ++i) y[i] = e[i] / l;
}

// The same with __expf: (x - m) * SCALE, then times nvcc's f32 log2(e).
extern "C" __global__ void softmax_fast(const float* __restrict__ x, float* __restrict__ y)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    float e[N], l = 0.0f;
    for (int i = 0; i < N; ++i) {
        e[i] = __expf((x[i] - m) * SCALE);
        l += e[i];
    }
    for (int i = 0; i < N; ++i) y[i] = e[i] / l;
}

// The scale as kernel parameters, as a host passes them: the reference
// uses scale, the other kernel scale_log2 = scale * log2(e) rounded to f32
// on the host (the spec gives both values).
extern "C" __global__ void softmax_ref_p(const float* __restrict__ x, float* __restrict__ y, float scale,
                                         float scale_log2)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    float e[N], l = 0.0f;
    for (int i = 0; i < N; ++i) {
        e[i] = expf((x[i] - m) * scale);
        l += e[i];
    }
    for (int i = 0; i < N; ++i) y[i] = e[i] / l;
}

extern "C" __global__ void softmax_exp2_p(const float* __restrict__ x, float* __restrict__ y, float scale,
                                          float scale_log2)
{
    float m = -INFINITY;
    for (int i = 0; i < N; ++i) m = fmaxf(m, x[i]);
    const float m_scaled = m * scale_log2;
    float e[N], l = 0.0f;
    for (int i = 0; i < N; ++i) {
        e[i] = exp2f(x[i] * scale_log2 - m_scaled);
        l += e[i];
    }
    for (int i = 0; i < N; ++i) y[i] = e[i] / l;
}
