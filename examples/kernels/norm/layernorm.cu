// Layer norm and RMS norm over rows of N (runtime) f32 values, M rows:
//   y[r, c] = (x[r, c] - mean) * rstd * w[c] + b[c],  rstd = 1 / sqrt(var + eps)
//   mean = sum_c x[r, c] / N,  var = sum_c (x[r, c] - mean)^2 / N
// and RMS norm  y[r, c] = x[r, c] * rsqrt(sum_c x[r, c]^2 / N + eps) * w[c].
//
//   layernorm_ref:   one thread per row (block [1], grid [M]), two passes,
//                    1 / __fsqrt_rn(var + eps).
//   layernorm_block: in the style of Triton's tutorial layer norm: one CTA of
//                    128 threads per row covers a block of B columns (B the
//                    next power of two >= N, a runtime argument here, a
//                    constexpr in Triton), loads masked with 0 past N,
//                    mean = sum / N, var = sum(where(c < N, x - mean, 0)^2) / N,
//                    rsqrtf(var + eps); shared-memory tree reductions.
//   layernorm_sumsq: the same block, but var = sum(x^2) / N - mean^2, one
//                    pass over the data (equal over the reals, not in floats).
//   layernorm_block_badtail: the masked-tail bug: var divided by the block
//                    width B instead of N (right only when N == B).
//   rmsnorm_ref / rmsnorm_block: RMS norm, one thread per row / one CTA per row.
#define NT 128
#define EPS 1e-5f

extern "C" __global__ void layernorm_ref(const float* x, const float* w, const float* b, float* y, int M, int N)
{
    int r = blockIdx.x;
    if (threadIdx.x != 0 || r >= M) return;
    const float* xr = x + (long)r * N;
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += xr[i];
    float mean = s / N;
    float v = 0.0f;
    for (int i = 0; i < N; ++i) {
        float d = xr[i] - mean;
        v += d * d;
    }
    v = v / N;
    float rstd = 1.0f / __fsqrt_rn(v + EPS);
    for (int i = 0; i < N; ++i) y[(long)r * N + i] = (xr[i] - mean) * rstd * w[i] + b[i];
}

// The sum over the CTA of each thread's v (every thread gets it).
__device__ float block_sum(float v, float* red)
{
    int t = threadIdx.x;
    red[t] = v;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    float total = red[0];
    __syncthreads();
    return total;
}

// Mode 0: two passes (Triton's tutorial); 1: sum of squares minus the
// squared mean; 2: two passes with var divided by B (the bug).
template <int Mode>
__device__ void layernorm_block_body(const float* x, const float* w, const float* b, float* y, int M, int N, int B)
{
    __shared__ float red[NT];
    int r = blockIdx.x, t = threadIdx.x;
    if (r >= M) return;
    const float* xr = x + (long)r * N;
    float s = 0.0f, sq = 0.0f;
    for (int c = t; c < B; c += NT) {
        float v = c < N ? xr[c] : 0.0f;
        s += v;
        sq += v * v;
    }
    float mean = block_sum(s, red) / N;
    float var;
    if (Mode == 1) {
        var = block_sum(sq, red) / N - mean * mean;
    } else {
        float a = 0.0f;
        for (int c = t; c < B; c += NT) {
            float d = c < N ? xr[c] - mean : 0.0f;
            a += d * d;
        }
        var = block_sum(a, red) / (Mode == 2 ? B : N);
    }
    float rstd = rsqrtf(var + EPS);
    for (int c = t; c < N; c += NT) y[(long)r * N + c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

extern "C" __global__ void layernorm_block(const float* x, const float* w, const float* b, float* y, int M, int N, int B)
{
    layernorm_block_body<0>(x, w, b, y, M, N, B);
}

extern "C" __global__ void layernorm_sumsq(const float* x, const float* w, const float* b, float* y, int M, int N, int B)
{
    layernorm_block_body<1>(x, w, b, y, M, N, B);
}

extern "C" __global__ void layernorm_block_badtail(const float* x, const float* w, const float* b, float* y, int M, int N, int B)
{
    layernorm_block_body<2>(x, w, b, y, M, N, B);
}

extern "C" __global__ void rmsnorm_ref(const float* x, const float* w, float* y, int M, int N)
{
    int r = blockIdx.x;
    if (threadIdx.x != 0 || r >= M) return;
    const float* xr = x + (long)r * N;
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += xr[i] * xr[i];
    float rr = 1.0f / __fsqrt_rn(s / N + EPS);
    for (int i = 0; i < N; ++i) y[(long)r * N + i] = xr[i] * rr * w[i];
}

extern "C" __global__ void rmsnorm_block(const float* x, const float* w, float* y, int M, int N, int B)
{
    __shared__ float red[NT];
    int r = blockIdx.x, t = threadIdx.x;
    if (r >= M) return;
    const float* xr = x + (long)r * N;
    float sq = 0.0f;
    for (int c = t; c < B; c += NT) {
        float v = c < N ? xr[c] : 0.0f;
        sq += v * v;
    }
    float rstd = rsqrtf(block_sum(sq, red) / N + EPS);
    for (int c = t; c < N; c += NT) y[(long)r * N + c] = xr[c] * rstd * w[c];
}
