// FlashAttention-1 style, no tensor cores. K and V are streamed through shared
// memory in tiles of BC keys. Per tile: every thread computes 4 scores of its
// query row; one thread per row then takes the tile max mt, forms
// P = exp(S - mt) and the running statistics, and every thread updates its 8
// output columns with FA1's normalized rule
//   O = (l_old * exp(m_old - m_new) * O + exp(mt - m_new) * P V) / l_new.
// Thread t owns query row t / 8 and output columns (t % 8) * 8 .. + 8.
// Launch: grid [1,1,1], block [128,1,1].
#define LQ 16
#define LK 512
#define D 64
#define BC 32
#define THREADS 128
#define SCALE 0.125f
#define COLS_PER_THREAD (D / (THREADS / LQ))     // 8
#define SCORES_PER_THREAD (BC / (THREADS / LQ))  // 4

extern "C" __global__ void attn_fa1(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O)
{
    __shared__ float Qs[LQ * D];
    __shared__ float Ks[BC * D];
    __shared__ float Vs[BC * D];
    __shared__ float Ss[LQ * BC];
    __shared__ float row_m[LQ], row_l[LQ];
    __shared__ float row_keep[LQ], row_new[LQ];  // l_old*exp(m_old-m_new), exp(mt-m_new)

    unsigned t = threadIdx.x;
    unsigned r = t / (THREADS / LQ);
    unsigned part = t % (THREADS / LQ);
    for (unsigned i = t; i < LQ * D; i += THREADS)
        Qs[i] = Q[i];
    if (t < LQ) {
        row_m[t] = -INFINITY;
        row_l[t] = 0.0f;
    }
    float o[COLS_PER_THREAD] = {};

#pragma unroll 1
    for (unsigned tile = 0; tile < LK / BC; ++tile) {
        for (unsigned i = t; i < BC * D; i += THREADS) {
            Ks[i] = K[tile * BC * D + i];
            Vs[i] = V[tile * BC * D + i];
        }
        __syncthreads();

        for (unsigned c = 0; c < SCORES_PER_THREAD; ++c) {
            unsigned j = part * SCORES_PER_THREAD + c;
            float acc = 0.0f;
            for (unsigned d = 0; d < D; ++d)
                acc += Qs[r * D + d] * Ks[j * D + d];
            Ss[r * BC + j] = acc * SCALE;
        }
        __syncthreads();

        if (t < LQ) {
            float mt = -INFINITY;
            for (unsigned j = 0; j < BC; ++j)
                mt = fmaxf(mt, Ss[t * BC + j]);
            float lt = 0.0f;
            for (unsigned j = 0; j < BC; ++j) {
                float p = expf(Ss[t * BC + j] - mt);
                Ss[t * BC + j] = p;
                lt += p;
            }
            float m_old = row_m[t], l_old = row_l[t];
            float m_new = fmaxf(m_old, mt);
            float keep = l_old * expf(m_old - m_new);
            float add = expf(mt - m_new);
            float l_new = keep + add * lt;
            row_m[t] = m_new;
            row_l[t] = l_new;
            row_keep[t] = keep;
            row_new[t] = add;
        }
        __syncthreads();

        float keep = row_keep[r], add = row_new[r], l_new = row_l[r];
        for (unsigned c = 0; c < COLS_PER_THREAD; ++c) {
            unsigned d = part * COLS_PER_THREAD + c;
            float pv = 0.0f;
            for (unsigned j = 0; j < BC; ++j)
                pv += Ss[r * BC + j] * Vs[j * D + d];
            o[c] = (keep * o[c] + add * pv) / l_new;
        }
        __syncthreads();
    }
    for (unsigned c = 0; c < COLS_PER_THREAD; ++c)
        O[r * D + part * COLS_PER_THREAD + c] = o[c];
}
