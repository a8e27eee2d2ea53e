// Bug: implicit-GEMM convolution whose im2col decodes the filter tap with kh
// and kw swapped (kh = tap % 3, kw = tap / 3), i.e. it convolves with the
// transposed filter: not equivalent.
// Launch: grid [1,1,1], block [128,1,1].
#define H 8
#define W 8
#define CI 4
#define CO 8
#define KH 3
#define KW 3
#define PAD 1
#define GM (H * W)          // GEMM rows: output pixels
#define GN CO               // GEMM columns: output channels
#define GK (KH * KW * CI)   // reduction: filter taps x input channels
#define THREADS 128
#define OUTS_PER_THREAD (GM * GN / THREADS)  // 4

extern "C" __global__ void conv_badindex(const float* __restrict__ x, const float* __restrict__ w,
                                         float* __restrict__ y)
{
    __shared__ float As[GM * GK];  // im2col of the input, zero where the filter hangs over
    __shared__ float Bs[GK * GN];  // HWIO weights are already the K x N matrix
    int t = threadIdx.x;
    for (int i = t; i < GM * GK; i += THREADS) {
        int m = i / GK, k = i % GK;
        int tap = k / CI, ci = k % CI;
        int kh = tap % KW, kw = tap / KW;  // bug: swapped
        int ih = m / W + kh - PAD, iw = m % W + kw - PAD;
        As[i] = (ih >= 0 && ih < H && iw >= 0 && iw < W) ? x[(ih * W + iw) * CI + ci] : 0.0f;
    }
    for (int i = t; i < GK * GN; i += THREADS)
        Bs[i] = w[i];
    __syncthreads();

    int m = t / (GN / OUTS_PER_THREAD);
    int n0 = (t % (GN / OUTS_PER_THREAD)) * OUTS_PER_THREAD;
    float acc[OUTS_PER_THREAD] = {};
    for (int k = 0; k < GK; ++k) {
        float a = As[m * GK + k];
        for (int j = 0; j < OUTS_PER_THREAD; ++j)
            acc[j] += a * Bs[k * GN + n0 + j];
    }
    for (int j = 0; j < OUTS_PER_THREAD; ++j)
        y[m * GN + n0 + j] = acc[j];
}
