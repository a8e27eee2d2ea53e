// Float hazards that are and are not an effect of evaluation order
// (tileverify test, docs/cuda.md "Hazards and the order of a sum").
// PTX: nvcc 13, -O3 -arch=sm_80 (gemm_order.ptx).
//
// C[64,64] = A[64,64] * B[64,64], row-major f32.
//   gemm_ref:         one thread per element of C, k = 0, 1, ..., 63.
//                     Launch: block [32, 32, 1], grid [2, 2, 1].
//   gemm_reg_reverse: register blocking, each of 256 threads a 4 x 4 block
//                     of C in registers, k = 63, 62, ..., 0: the same sums
//                     in the other order. Correct: both orders are valid
//                     float evaluations of the same sums, though with values
//                     near FLT_MAX one order's partial sums can overflow
//                     where the other's do not.
//                     Launch: block [16, 16, 1], grid [1, 1, 1].
// y[4096] = x[4096]:
//   copy_ref:         y = x.
//   copy_rescaled:    bug: y = (x * 2^80) * 2^-80, as a kernel that scales
//                     up against underflow and back; it overflows for
//                     |x| >= 2^48, where the reference cannot.
//                     Launch (both): block [256, 1, 1], grid [16, 1, 1].

#define M 64
#define N 64
#define K 64

extern "C" __global__ void gemm_ref(const float* A, const float* B, float* C)
{
    int row = blockIdx.y * 32 + threadIdx.y, col = blockIdx.x * 32 + threadIdx.x;
    float acc = 0.0f;
    for (int k = 0; k < K; ++k) acc += A[row * K + k] * B[k * N + col];
    C[row * N + col] = acc;
}

extern "C" __global__ void gemm_reg_reverse(const float* A, const float* B, float* C)
{
    int r0 = threadIdx.y * 4, c0 = threadIdx.x * 4;
    float acc[4][4] = {};
    for (int k = K - 1; k >= 0; --k) {
        float a[4], b[4];
#pragma unroll
        for (int i = 0; i < 4; ++i) a[i] = A[(r0 + i) * K + k];
#pragma unroll
        for (int j = 0; j < 4; ++j) b[j] = B[k * N + c0 + j];
#pragma unroll
        for (int i = 0; i < 4; ++i)
#pragma unroll
            for (int j = 0; j < 4; ++j) acc[i][j] += a[i] * b[j];
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) C[(r0 + i) * N + c0 + j] = acc[i][j];
}

extern "C" __global__ void copy_ref(const float* x, float* y)
{
    int i = blockIdx.x * 256 + threadIdx.x;
    y[i] = x[i];
}

extern "C" __global__ void copy_rescaled(const float* x, float* y)
{
    int i = blockIdx.x * 256 + threadIdx.x;
    y[i] = (x[i] * 0x1p80f) * 0x1p-80f;
}
