// Size-parametric row softmax for boundary-shape suites: y[r, :] =
// softmax(x[r, :]) over rows of N (runtime) f32 values, M rows.
//   softmax_rows_ref: one thread per row, max-subtracted, three loops.
//   softmax_rows_block: one CTA of 128 threads per row, each thread a
//     strided slice, shared-memory tree reductions of the max and the sum:
//     correct at every N.
//   softmax_rows_block_notail: the same, but each thread covers
//     ceil(N / 128) elements from tid * ceil(N / 128) and the last slice is
//     not cut at N: it reads past the row (the next row's values) when N is
//     not a multiple of 128.
// Launch: ref block [32, 1, 1], grid [ceil(M/32), 1, 1]; block variants
// block [128, 1, 1], grid [M, 1, 1].
#define NT 128

extern "C" __global__ void softmax_rows_ref(const float* x, float* y, int M, int N)
{
    int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= M) return;
    const float* xr = x + (long)r * N;
    float m = xr[0];
    for (int i = 1; i < N; ++i) m = fmaxf(m, xr[i]);
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += expf(xr[i] - m);
    for (int i = 0; i < N; ++i) y[(long)r * N + i] = expf(xr[i] - m) / s;
}

template <bool Tail>
__device__ void softmax_rows_block_body(const float* x, float* y, int M, int N)
{
    __shared__ float red[NT];
    int r = blockIdx.x, t = threadIdx.x;
    const float* xr = x + (long)r * N;
    int per = (N + NT - 1) / NT;
    int lo = Tail ? t : t * per, step = Tail ? NT : 1;
    int hi = Tail ? N : min(t * per + per, M * N - r * N);  // notail: may run past this row
    float m = -INFINITY;
    for (int i = lo; i < hi; i += step) m = fmaxf(m, xr[i]);
    red[t] = m;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (t < s) red[t] = fmaxf(red[t], red[t + s]);
        __syncthreads();
    }
    m = red[0];
    __syncthreads();
    float sum = 0.0f;
    for (int i = lo; i < hi; i += step) sum += expf(xr[i] - m);
    red[t] = sum;
    __syncthreads();
    for (int s = NT / 2; s > 0; s >>= 1) {
        if (t < s) red[t] += red[t + s];
        __syncthreads();
    }
    sum = red[0];
    for (int i = lo; i < hi && i < N; i += step) y[(long)r * N + i] = expf(xr[i] - m) / sum;
}

extern "C" __global__ void softmax_rows_block(const float* x, float* y, int M, int N)
{
    softmax_rows_block_body<true>(x, y, M, N);
}

extern "C" __global__ void softmax_rows_block_notail(const float* x, float* y, int M, int N)
{
    softmax_rows_block_body<false>(x, y, M, N);
}
