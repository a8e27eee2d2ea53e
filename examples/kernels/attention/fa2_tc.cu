// FlashAttention-2 style on tensor cores, f16 inputs (mma.sync.m16n8k16 with
// f32 accumulators, operands fetched with ldmatrix). FA2's deferred
// normalization, with the key sequence split across the 4 warps (each warp
// owns keys 128w .. 128w+128 and all 16 query rows, like split-KV decoding);
// the four partial results are merged through shared memory at the end:
//   O = sum_w exp(m_w - M) O_w / sum_w exp(m_w - M) l_w,  M = max_w m_w.
// Inside a warp the score fragment (C layout) is reused directly as the A
// fragment of the P V product, the usual FA2 register trick; row maxima are
// combined across the 4 lanes of a row with shuffles, row sums stay per lane
// until the end.
// Fragment layouts (PTX ISA, mma.m16n8k16 .f16): g = lane / 4, q = lane % 4;
//   A regs: {(g, 2q..2q+1), (g+8, 2q..), (g, 2q+8..), (g+8, 2q+8..)}
//   B regs: {(k=2q..2q+1, n=g), (k=2q+8.., n=g)}
//   C: c0 (g, 2q), c1 (g, 2q+1), c2 (g+8, 2q), c3 (g+8, 2q+1)
// Launch: grid [1,1,1], block [128,1,1].
#include <cuda_fp16.h>
#define LQ 16
#define LK 512
#define D 64
#define WARPS 4
#define THREADS (32 * WARPS)
#define KEYS_PER_STEP 16                 // keys one warp handles per step
#define CTA_KEYS (WARPS * KEYS_PER_STEP)  // keys staged in shared memory per step
#define STEPS (LK / CTA_KEYS)            // 8
#define SCALE 0.125f

__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], const void* p)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(smem_addr(p)));
}

__device__ __forceinline__ void mma_f16(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1)
{
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ unsigned pack_half2(float lo, float hi)
{
    __half2 h = __floats2half2_rn(lo, hi);
    return *reinterpret_cast<unsigned*>(&h);
}

extern "C" __global__ void attn_fa2_tc(const __half* __restrict__ Q, const __half* __restrict__ K,
                                       const __half* __restrict__ V, float* __restrict__ O)
{
    __shared__ __align__(16) __half Qs[LQ * D];
    __shared__ __align__(16) __half Ks[CTA_KEYS * D];
    __shared__ __align__(16) __half Vs[CTA_KEYS * D];
    __shared__ float part_o[WARPS][LQ * D];
    __shared__ float part_m[WARPS][LQ], part_l[WARPS][LQ];

    unsigned t = threadIdx.x;
    unsigned warp = t / 32, lane = t % 32;
    unsigned g = lane / 4, q = lane % 4;
    unsigned mi = lane / 8, mr = lane % 8;  // ldmatrix: which 8x8 matrix / row this lane addresses

    for (unsigned i = t; i < LQ * D / 8; i += THREADS)
        reinterpret_cast<uint4*>(Qs)[i] = reinterpret_cast<const uint4*>(Q)[i];

    float m[2] = {-INFINITY, -INFINITY};  // running max of rows g, g+8
    float l[2] = {0.0f, 0.0f};            // this lane's share of the running sums
    float o[D / 8][4] = {};               // 8 n-tiles of output columns

#pragma unroll 1
    for (unsigned step = 0; step < STEPS; ++step) {
        __syncthreads();  // all warps are done with the previous Ks, Vs
        const uint4* Kg = reinterpret_cast<const uint4*>(K + step * CTA_KEYS * D);
        const uint4* Vg = reinterpret_cast<const uint4*>(V + step * CTA_KEYS * D);
        for (unsigned i = t; i < CTA_KEYS * D / 8; i += THREADS) {
            reinterpret_cast<uint4*>(Ks)[i] = Kg[i];
            reinterpret_cast<uint4*>(Vs)[i] = Vg[i];
        }
        __syncthreads();

        // Keys 128w + 16step .. +16 live in rows 16w .. 16w+16 of Ks / Vs.
        const __half* Kw = Ks + warp * KEYS_PER_STEP * D;
        const __half* Vw = Vs + warp * KEYS_PER_STEP * D;

        // S (16 x 16) = Q K^T as two n-tiles of 8 keys.
        float s[2][4] = {};
        for (unsigned kk = 0; kk < D / 16; ++kk) {
            unsigned a[4], b[4];
            // A: matrices (rows 0-7, k 0-7), (rows 8-15, k 0-7), (rows 0-7, k 8-15), (rows 8-15, k 8-15)
            ldmatrix_x4(a, Qs + ((mi % 2) * 8 + mr) * D + kk * 16 + (mi / 2) * 8);
            // B: matrices (keys 0-7, k 0-7), (keys 0-7, k 8-15), (keys 8-15, k 0-7), (keys 8-15, k 8-15)
            ldmatrix_x4(b, Kw + ((mi / 2) * 8 + mr) * D + kk * 16 + (mi % 2) * 8);
            mma_f16(s[0], a, b[0], b[1]);
            mma_f16(s[1], a, b[2], b[3]);
        }

        float mt[2];
        for (unsigned h = 0; h < 2; ++h) {
            for (unsigned nt = 0; nt < 2; ++nt) {
                s[nt][2 * h] *= SCALE;
                s[nt][2 * h + 1] *= SCALE;
            }
            mt[h] = fmaxf(fmaxf(s[0][2 * h], s[0][2 * h + 1]), fmaxf(s[1][2 * h], s[1][2 * h + 1]));
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 1));
            mt[h] = fmaxf(mt[h], __shfl_xor_sync(0xffffffffu, mt[h], 2));
        }
        float p[2][4];
        for (unsigned h = 0; h < 2; ++h) {
            float m_new = fmaxf(m[h], mt[h]);
            float alpha = expf(m[h] - m_new);
            float sum = 0.0f;
            for (unsigned nt = 0; nt < 2; ++nt)
                for (unsigned e = 0; e < 2; ++e) {
                    p[nt][2 * h + e] = expf(s[nt][2 * h + e] - m_new);
                    sum += p[nt][2 * h + e];
                }
            l[h] = alpha * l[h] + sum;
            m[h] = m_new;
            for (unsigned n = 0; n < D / 8; ++n) {
                o[n][2 * h] *= alpha;
                o[n][2 * h + 1] *= alpha;
            }
        }

        // P as the A operand (16 rows x 16 keys) of O += P V.
        unsigned pa[4] = {pack_half2(p[0][0], p[0][1]), pack_half2(p[0][2], p[0][3]),
                          pack_half2(p[1][0], p[1][1]), pack_half2(p[1][2], p[1][3])};
        for (unsigned n = 0; n < D / 8; n += 2) {
            unsigned b[4];
            // B via .trans: matrices (keys 0-7, cols 8n..), (keys 8-15, cols 8n..),
            // (keys 0-7, cols 8n+8..), (keys 8-15, cols 8n+8..)
            ldmatrix_x4_trans(b, Vw + ((mi % 2) * 8 + mr) * D + n * 8 + (mi / 2) * 8);
            mma_f16(o[n], pa, b[0], b[1]);
            mma_f16(o[n + 1], pa, b[2], b[3]);
        }
    }

    // Row sums: combine the 4 lanes of each row.
    for (unsigned h = 0; h < 2; ++h) {
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 1);
        l[h] += __shfl_xor_sync(0xffffffffu, l[h], 2);
    }
    for (unsigned n = 0; n < D / 8; ++n)
        for (unsigned i = 0; i < 4; ++i)
            part_o[warp][(g + (i / 2) * 8) * D + n * 8 + 2 * q + i % 2] = o[n][i];
    if (q == 0) {
        part_m[warp][g] = m[0];
        part_m[warp][g + 8] = m[1];
        part_l[warp][g] = l[0];
        part_l[warp][g + 8] = l[1];
    }
    __syncthreads();

    for (unsigned i = t; i < LQ * D; i += THREADS) {
        unsigned row = i / D;
        float mx = -INFINITY;
        for (unsigned w = 0; w < WARPS; ++w)
            mx = fmaxf(mx, part_m[w][row]);
        float num = 0.0f, den = 0.0f;
        for (unsigned w = 0; w < WARPS; ++w) {
            float f = expf(part_m[w][row] - mx);
            num += f * part_o[w][i];
            den += f * part_l[w][row];
        }
        O[i] = num / den;
    }
}
