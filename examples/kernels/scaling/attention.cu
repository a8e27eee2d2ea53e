// Size-parametric single-head attention for the whole-grid scaling benchmark:
// O = softmax(Q K^T * scale) V with Q and O Lq x D, K and V Lk x D, all
// row-major f32, head dimension D = 64 fixed, scale = 1/8 = 1/sqrt(D); Lq and
// Lk are runtime arguments (any values >= 1).
//   attn_naive: one thread per query row, three passes over the keys (the
//               scores are recomputed in each): the row's maximum score m,
//               the sum l of exp(s_j - m), then
//               O[q][d] = (sum over j of exp(s_j - m) * V[j][d]) / l, with the
//               64 sums of the row in registers.
//               Launch: block [32, 1, 1], grid [ceil(Lq/32), 1, 1].
//   attn_flash: FlashAttention-2 style, no tensor cores: one CTA of 128
//               threads per block of 16 query rows (rows past Lq read zeros
//               and store nothing); keys and values in tiles of 32 through
//               shared memory (keys past Lk read zeros and get probability
//               0); online softmax: running max m and sum l per row, the
//               output accumulator rescaled by exp(m_old - m_new) per tile
//               and divided by l once at the end. Thread t owns query row
//               t / 8 of the block, scores (t % 8) * 4 .. + 4 of each key
//               tile and output columns (t % 8) * 8 .. + 8; the row's
//               statistics are combined with warp shuffles among its 8
//               lanes, its probabilities exchanged through shared memory
//               within the warp (__syncwarp).
//               Launch: block [128, 1, 1], grid [ceil(Lq/16), 1, 1].
//   attn_flash_norescale: attn_flash without the rescale of the output
//               accumulator when the running max grows (the sum l is still
//               rescaled): a bug, not equivalent. Launch as attn_flash.
#define D 64
#define SCALE 0.125f

__device__ __forceinline__ float score(const float* __restrict__ q, const float* __restrict__ k)
{
    float acc = 0.0f;
#pragma unroll
    for (int d = 0; d < D; ++d) acc += q[d] * k[d];
    return acc * SCALE;
}

extern "C" __global__ void attn_naive(const float* __restrict__ Q, const float* __restrict__ K,
                                      const float* __restrict__ V, float* __restrict__ O, int Lq, int Lk)
{
    int i = blockIdx.x * 32 + threadIdx.x;
    if (i >= Lq) return;
    const float* q = Q + i * D;
    float m = -INFINITY;
#pragma unroll 1
    for (int j = 0; j < Lk; ++j) m = fmaxf(m, score(q, K + j * D));
    float l = 0.0f;
#pragma unroll 1
    for (int j = 0; j < Lk; ++j) l += expf(score(q, K + j * D) - m);
    float o[D] = {};
#pragma unroll 1
    for (int j = 0; j < Lk; ++j) {
        float p = expf(score(q, K + j * D) - m);
#pragma unroll
        for (int d = 0; d < D; ++d) o[d] += p * V[j * D + d];
    }
#pragma unroll
    for (int d = 0; d < D; ++d) O[i * D + d] = o[d] / l;
}

#define BLOCK_M 16
#define BC 32
#define THREADS 128
#define LANES_PER_ROW (THREADS / BLOCK_M)       // 8
#define COLS_PER_THREAD (D / LANES_PER_ROW)     // 8
#define SCORES_PER_THREAD (BC / LANES_PER_ROW)  // 4

template <bool Rescale>
__device__ void attn_flash_body(const float* __restrict__ Q, const float* __restrict__ K,
                                const float* __restrict__ V, float* __restrict__ O, int Lq, int Lk)
{
    __shared__ float Qs[BLOCK_M * D];
    __shared__ float Ks[BC * D];
    __shared__ float Vs[BC * D];
    __shared__ float Ps[BLOCK_M * BC];

    int t = threadIdx.x;
    int r = t / LANES_PER_ROW, part = t % LANES_PER_ROW;
    int q0 = blockIdx.x * BLOCK_M;
    for (int i = t; i < BLOCK_M * D; i += THREADS)
        Qs[i] = q0 + i / D < Lq ? Q[q0 * D + i] : 0.0f;
    float m = -INFINITY, l = 0.0f;
    float o[COLS_PER_THREAD] = {};

    int tiles = (Lk + BC - 1) / BC;
#pragma unroll 1
    for (int tile = 0; tile < tiles; ++tile) {
        int j0 = tile * BC;
        __syncthreads();  // everyone is done with the previous Ks, Vs, Ps (and Qs is written)
        for (int i = t; i < BC * D; i += THREADS) {
            bool in = j0 + i / D < Lk;
            Ks[i] = in ? K[j0 * D + i] : 0.0f;
            Vs[i] = in ? V[j0 * D + i] : 0.0f;
        }
        __syncthreads();

        float s[SCORES_PER_THREAD];
        float mt = -INFINITY;
        for (int c = 0; c < SCORES_PER_THREAD; ++c) {
            int j = part * SCORES_PER_THREAD + c;
            s[c] = 0.0f;
            if (j0 + j < Lk) {
                s[c] = score(Qs + r * D, Ks + j * D);
                mt = fmaxf(mt, s[c]);
            }
        }
        for (int off = LANES_PER_ROW / 2; off > 0; off >>= 1)
            mt = fmaxf(mt, __shfl_xor_sync(0xffffffffu, mt, off));
        float m_new = fmaxf(m, mt);
        float alpha = expf(m - m_new);
        float lt = 0.0f;
        for (int c = 0; c < SCORES_PER_THREAD; ++c) {
            int j = part * SCORES_PER_THREAD + c;
            float p = j0 + j < Lk ? expf(s[c] - m_new) : 0.0f;
            Ps[r * BC + j] = p;
            lt += p;
        }
        for (int off = LANES_PER_ROW / 2; off > 0; off >>= 1)
            lt += __shfl_xor_sync(0xffffffffu, lt, off);
        l = alpha * l + lt;
        m = m_new;
        __syncwarp();  // the row's probabilities were written by lanes of this warp

        for (int c = 0; c < COLS_PER_THREAD; ++c) {
            int d = part * COLS_PER_THREAD + c;
            float pv = 0.0f;
            for (int j = 0; j < BC; ++j)
                pv += Ps[r * BC + j] * Vs[j * D + d];
            o[c] = Rescale ? alpha * o[c] + pv : o[c] + pv;
        }
    }
    if (q0 + r < Lq)
        for (int c = 0; c < COLS_PER_THREAD; ++c)
            O[(q0 + r) * D + part * COLS_PER_THREAD + c] = o[c] / l;
}

extern "C" __global__ void attn_flash(const float* __restrict__ Q, const float* __restrict__ K,
                                      const float* __restrict__ V, float* __restrict__ O, int Lq, int Lk)
{
    attn_flash_body<true>(Q, K, V, O, Lq, Lk);
}

extern "C" __global__ void attn_flash_norescale(const float* __restrict__ Q, const float* __restrict__ K,
                                                const float* __restrict__ V, float* __restrict__ O,
                                                int Lq, int Lk)
{
    attn_flash_body<false>(Q, K, V, O, Lq, Lk);
}
