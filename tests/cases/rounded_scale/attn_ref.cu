// The attention example's ref.cu at D = 32 with scale 1/sqrt(32), which is not a power of two
// (nvcc -arch=sm_80 -ptx ref.cu -o attn_ref.ptx, nvcc 13.0).
// Attention reference: one thread computes softmax(Q K^T / sqrt(D)) V for a
// whole head, materializing each query row's 512 scores in a local array.
// Q is LQ x D, K and V are LK x D, O is LQ x D, all row-major f32.
// Launch: grid [1,1,1], block [1,1,1].
#define LQ 16
#define LK 512
#define D 32
#define SCALE 0.17677669529663687f

extern "C" __global__ void attn_ref(const float* __restrict__ Q, const float* __restrict__ K,
                                    const float* __restrict__ V, float* __restrict__ O)
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
            s[j] = acc * SCALE;
            m = fmaxf(m, s[j]);
        }
        float l = 0.0f;
#pragma unroll 1
        for (int j = 0; j < LK; ++j) {
            s[j] = expf(s[j] - m);
            l += s[j];
        }
#pragma unroll 1
        for (int d = 0; d < D; ++d) {
            float o = 0.0f;
#pragma unroll 8
            for (int j = 0; j < LK; ++j)
                o += s[j] * V[j * D + d];
            O[i * D + d] = o / l;
        }
    }
}
