// The attention example's fa2.cu at D = 32 with scale 1/sqrt(32), which is not a power of two
// (nvcc -arch=sm_80 -ptx -use_fast_math fa2.cu -o attn_fa2.ptx, nvcc 13.0).
// FlashAttention-2 style, no tensor cores: deferred normalization (O is
// rescaled by exp(m_old - m_new) per tile and divided by l once at the end),
// and the row statistics of a query row are combined with warp shuffles among
// the 8 lanes that own the row instead of through shared memory; the
// probabilities are exchanged through shared memory within the warp only
// (__syncwarp). Thread t owns query row t / 8, scores/keys (t % 8) * 4 .. + 4
// of each tile and output columns (t % 8) * 8 .. + 8.
// Launch: grid [1,1,1], block [128,1,1].
#define LQ 16
#define LK 512
#define D 32
#define BC 32
#define THREADS 128
#define SCALE 0.17677669529663687f
#define LANES_PER_ROW (THREADS / LQ)              // 8
#define COLS_PER_THREAD (D / LANES_PER_ROW)       // 8
#define SCORES_PER_THREAD (BC / LANES_PER_ROW)    // 4

extern "C" __global__ void attn_fa2(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O)
{
    __shared__ float Qs[LQ * D];
    __shared__ float Ks[BC * D];
    __shared__ float Vs[BC * D];
    __shared__ float Ps[LQ * BC];

    unsigned t = threadIdx.x;
    unsigned r = t / LANES_PER_ROW;
    unsigned part = t % LANES_PER_ROW;
    for (unsigned i = t; i < LQ * D; i += THREADS)
        Qs[i] = Q[i];
    float m = -INFINITY, l = 0.0f;
    float o[COLS_PER_THREAD] = {};

#pragma unroll 1
    for (unsigned tile = 0; tile < LK / BC; ++tile) {
        __syncthreads();  // everyone is done with the previous Ks, Vs, Ps
        for (unsigned i = t; i < BC * D; i += THREADS) {
            Ks[i] = K[tile * BC * D + i];
            Vs[i] = V[tile * BC * D + i];
        }
        __syncthreads();

        float s[SCORES_PER_THREAD];
        float mt = -INFINITY;
        for (unsigned c = 0; c < SCORES_PER_THREAD; ++c) {
            unsigned j = part * SCORES_PER_THREAD + c;
            float acc = 0.0f;
            for (unsigned d = 0; d < D; ++d)
                acc += Qs[r * D + d] * Ks[j * D + d];
            s[c] = acc * SCALE;
            mt = fmaxf(mt, s[c]);
        }
        for (unsigned off = LANES_PER_ROW / 2; off > 0; off >>= 1)
            mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
        float m_new = fmaxf(m, mt);
        float alpha = expf(m - m_new);
        float lt = 0.0f;
        for (unsigned c = 0; c < SCORES_PER_THREAD; ++c) {
            float p = expf(s[c] - m_new);
            Ps[r * BC + part * SCORES_PER_THREAD + c] = p;
            lt += p;
        }
        for (unsigned off = LANES_PER_ROW / 2; off > 0; off >>= 1)
            lt += __shfl_xor_sync(0xffffffffu, lt, off);
        l = alpha * l + lt;
        m = m_new;
        __syncwarp();  // the row's probabilities were written by lanes of this warp

        for (unsigned c = 0; c < COLS_PER_THREAD; ++c) {
            unsigned d = part * COLS_PER_THREAD + c;
            float pv = 0.0f;
            for (unsigned j = 0; j < BC; ++j)
                pv += Ps[r * BC + j] * Vs[j * D + d];
            o[c] = alpha * o[c] + pv;
        }
    }
    for (unsigned c = 0; c < COLS_PER_THREAD; ++c)
        O[r * D + part * COLS_PER_THREAD + c] = o[c] / l;
}
