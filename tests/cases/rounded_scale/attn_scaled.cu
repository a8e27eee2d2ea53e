// Attention softmax(Q K^T / sqrt(D)) V at head size D (build with -DD=32, 64
// or 128, README.md): a one-thread reference with expf((s - m) * scale), and
// a FlashAttention-2 style kernel (a thread per query row, online softmax
// over tiles of BC keys, deferred normalization) that works in base 2 with
// scale_log2 = scale * log2(e), as FlashAttention does: nvcc folds that
// product, written in the source, into one rounded f32 constant.
// Q is LQ x D, K and V are LK x D, O is LQ x D, all row-major f32.
#ifndef D
#define D 32
#endif
#define LQ 4
#define LK 64
#define BC 16
#define SCALE (1.0f / sqrtf((float)D))
#define LOG2E 1.4426950408889634f

// Launch: grid [1,1,1], block [1,1,1].
__device__ void ref_body(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                         float* __restrict__ O, float scale)
{
    float s[LK];
#pragma unroll 1
    for (int i = 0; i < LQ; ++i) {
        float m = -INFINITY;
#pragma unroll 1
        for (int j = 0; j < LK; ++j) {
            float acc = 0.0f;
            for (int d = 0; d < D; ++d)
                acc += Q[i * D + d] * K[j * D + d];
            s[j] = acc;
            m = fmaxf(m, acc);
        }
        float l = 0.0f;
#pragma unroll 1
        for (int j = 0; j < LK; ++j) {
            s[j] = expf((s[j] - m) * scale);
            l += s[j];
        }
#pragma unroll 1
        for (int d = 0; d < D; ++d) {
            float o = 0.0f;
            for (int j = 0; j < LK; ++j)
                o += s[j] * V[j * D + d];
            O[i * D + d] = o / l;
        }
    }
}

// Launch: grid [1,1,1], block [LQ,1,1].
__device__ void fa2_body(const float* __restrict__ Q, const float* __restrict__ K, const float* __restrict__ V,
                         float* __restrict__ O, float scale_log2)
{
    const int i = threadIdx.x;
    float m = -INFINITY, l = 0.0f;
    float o[D];
    for (int d = 0; d < D; ++d) o[d] = 0.0f;
#pragma unroll 1
    for (int tile = 0; tile < LK / BC; ++tile) {
        float s[BC];
        float m_new = m;
        for (int c = 0; c < BC; ++c) {
            const int j = tile * BC + c;
            float acc = 0.0f;
            for (int d = 0; d < D; ++d)
                acc += Q[i * D + d] * K[j * D + d];
            s[c] = acc;
            m_new = fmaxf(m_new, acc);
        }
        const float m_scaled = m_new * scale_log2;
        const float alpha = exp2f(m * scale_log2 - m_scaled);
        float lt = 0.0f;
        for (int c = 0; c < BC; ++c) {
            s[c] = exp2f(s[c] * scale_log2 - m_scaled);
            lt += s[c];
        }
        l = alpha * l + lt;
        m = m_new;
        for (int d = 0; d < D; ++d) {
            float pv = 0.0f;
            for (int c = 0; c < BC; ++c)
                pv += s[c] * V[(tile * BC + c) * D + d];
            o[d] = alpha * o[d] + pv;
        }
    }
    for (int d = 0; d < D; ++d) O[i * D + d] = o[d] / l;
}

extern "C" __global__ void attn_ref(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O)
{
    ref_body(Q, K, V, O, SCALE);
}

extern "C" __global__ void attn_fa2(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O)
{
    fa2_body(Q, K, V, O, SCALE * LOG2E);
}

// The scale as kernel parameters: scale_log2 = scale * log2(e) rounded to
// f32 on the host (the spec gives both values).
extern "C" __global__ void attn_ref_p(const float* __restrict__ Q, const float* __restrict__ K,
                                      const float* __restrict__ V, float* __restrict__ O, float scale,
                                      float scale_log2)
{
    ref_body(Q, K, V, O, scale);
}

extern "C" __global__ void attn_fa2_p(const float* __restrict__ Q, const float* __restrict__ K,
                                      const float* __restrict__ V, float* __restrict__ O, float scale,
                                      float scale_log2)
{
    fa2_body(Q, K, V, O, scale_log2);
}
