// Direct 2D convolution reference: input 1x8x8x4 (NHWC), 3x3 filter with
// weights in HWIO layout [3][3][4][8], stride 1, zero padding 1, output
// 1x8x8x8 (NHWC). One thread per output element; the padding test depends
// only on the thread index.
// Launch: grid [1,1,1], block [512,1,1].
#define H 8
#define W 8
#define CI 4
#define CO 8
#define KH 3
#define KW 3
#define PAD 1

extern "C" __global__ void conv_direct(const float* __restrict__ x, const float* __restrict__ w,
                                       float* __restrict__ y)
{
    int t = threadIdx.x;
    int co = t % CO;
    int pix = t / CO;
    int oh = pix / W, ow = pix % W;
    float acc = 0.0f;
    for (int kh = 0; kh < KH; ++kh)
        for (int kw = 0; kw < KW; ++kw) {
            int ih = oh + kh - PAD, iw = ow + kw - PAD;
            if (ih >= 0 && ih < H && iw >= 0 && iw < W)
                for (int ci = 0; ci < CI; ++ci)
                    acc += x[(ih * W + iw) * CI + ci] * w[((kh * KW + kw) * CI + ci) * CO + co];
        }
    y[pix * CO + co] = acc;
}
