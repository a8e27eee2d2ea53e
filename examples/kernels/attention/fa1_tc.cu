// FlashAttention-1 style on tensor cores (TF32 mma.sync.m16n8k8, f32 inputs
// rounded to tf32 with cvt.rna). Same schedule as attn_fa1: per tile of BC
// keys, warp w computes scores S[:, 8w .. 8w+8) with mma; one thread per query
// row forms P = exp(S - mt) and FA1's running statistics; then warp w
// computes P V for output columns 16w .. 16w+16 with mma and applies
//   O = (l_old * exp(m_old - m_new) * O + exp(mt - m_new) * P V) / l_new
// to its accumulator fragments.
// Fragment layouts (PTX ISA, mma.m16n8k8 .tf32): g = lane / 4, q = lane % 4;
//   A: a0 (g, q), a1 (g+8, q), a2 (g, q+4), a3 (g+8, q+4)
//   B: b0 (k=q, n=g), b1 (k=q+4, n=g)
//   C: c0 (g, 2q), c1 (g, 2q+1), c2 (g+8, 2q), c3 (g+8, 2q+1)
// Launch: grid [1,1,1], block [128,1,1].
#define LQ 16
#define LK 512
#define D 64
#define BC 32
#define THREADS 128
#define SCALE 0.125f

__device__ __forceinline__ unsigned to_tf32(float f)
{
    unsigned r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(f));
    return r;
}

__device__ __forceinline__ void mma_tf32(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2])
{
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
        "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

extern "C" __global__ void attn_fa1_tc(const float* __restrict__ Q, const float* __restrict__ K,
                                       const float* __restrict__ V, float* __restrict__ O)
{
    __shared__ float Qs[LQ * D];
    __shared__ float Ks[BC * D];
    __shared__ float Vs[BC * D];
    __shared__ float Ss[LQ * BC];
    __shared__ float row_m[LQ], row_l[LQ];
    __shared__ float row_keep[LQ], row_new[LQ];

    unsigned t = threadIdx.x;
    unsigned warp = t / 32, lane = t % 32;
    unsigned g = lane / 4, q = lane % 4;
    for (unsigned i = t; i < LQ * D; i += THREADS)
        Qs[i] = Q[i];
    if (t < LQ) {
        row_m[t] = -INFINITY;
        row_l[t] = 0.0f;
    }
    float o[2][4] = {};  // two n-tiles of 8 output columns: 16w + 8nt

#pragma unroll 1
    for (unsigned tile = 0; tile < LK / BC; ++tile) {
        for (unsigned i = t; i < BC * D; i += THREADS) {
            Ks[i] = K[tile * BC * D + i];
            Vs[i] = V[tile * BC * D + i];
        }
        __syncthreads();

        // S[:, 8w .. 8w+8) = Q K_tile^T: B[k][n] = K[8w + n][k].
        float s[4] = {};
        for (unsigned ks = 0; ks < D / 8; ++ks) {
            unsigned a[4], b[2];
            a[0] = to_tf32(Qs[g * D + ks * 8 + q]);
            a[1] = to_tf32(Qs[(g + 8) * D + ks * 8 + q]);
            a[2] = to_tf32(Qs[g * D + ks * 8 + q + 4]);
            a[3] = to_tf32(Qs[(g + 8) * D + ks * 8 + q + 4]);
            b[0] = to_tf32(Ks[(warp * 8 + g) * D + ks * 8 + q]);
            b[1] = to_tf32(Ks[(warp * 8 + g) * D + ks * 8 + q + 4]);
            mma_tf32(s, a, b);
        }
        Ss[g * BC + warp * 8 + 2 * q] = s[0] * SCALE;
        Ss[g * BC + warp * 8 + 2 * q + 1] = s[1] * SCALE;
        Ss[(g + 8) * BC + warp * 8 + 2 * q] = s[2] * SCALE;
        Ss[(g + 8) * BC + warp * 8 + 2 * q + 1] = s[3] * SCALE;
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
            row_m[t] = m_new;
            row_l[t] = keep + add * lt;
            row_keep[t] = keep;
            row_new[t] = add;
        }
        __syncthreads();

        // PV[:, 16w + 8nt .. +8) = P V_tile: B[k][n] = V[k][16w + 8nt + n].
        for (unsigned nt = 0; nt < 2; ++nt) {
            unsigned n0 = warp * 16 + nt * 8;
            float pv[4] = {};
            for (unsigned ks = 0; ks < BC / 8; ++ks) {
                unsigned a[4], b[2];
                a[0] = to_tf32(Ss[g * BC + ks * 8 + q]);
                a[1] = to_tf32(Ss[(g + 8) * BC + ks * 8 + q]);
                a[2] = to_tf32(Ss[g * BC + ks * 8 + q + 4]);
                a[3] = to_tf32(Ss[(g + 8) * BC + ks * 8 + q + 4]);
                b[0] = to_tf32(Vs[(ks * 8 + q) * D + n0 + g]);
                b[1] = to_tf32(Vs[(ks * 8 + q + 4) * D + n0 + g]);
                mma_tf32(pv, a, b);
            }
            for (unsigned i = 0; i < 4; ++i) {
                unsigned row = g + (i / 2) * 8;
                o[nt][i] = (row_keep[row] * o[nt][i] + row_new[row] * pv[i]) / row_l[row];
            }
        }
        __syncthreads();
    }
    for (unsigned nt = 0; nt < 2; ++nt) {
        unsigned n0 = warp * 16 + nt * 8;
        O[g * D + n0 + 2 * q] = o[nt][0];
        O[g * D + n0 + 2 * q + 1] = o[nt][1];
        O[(g + 8) * D + n0 + 2 * q] = o[nt][2];
        O[(g + 8) * D + n0 + 2 * q + 1] = o[nt][3];
    }
}
