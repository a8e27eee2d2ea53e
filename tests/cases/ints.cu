// Integer tensor data: sums, scans and products of s32 inputs are exact over
// the integers; bit operations on data are outside the model.
// Regenerate: nvcc -arch=sm_80 -O3 -ptx ints.cu -o ints.ptx
extern "C" __global__ void isum_serial(const int* x, int* y) {
    int s = 0;
    for (int i = 0; i < 128; ++i) s += x[i];
    y[0] = s;
}
// Tree in shared memory, then shuffles, then the last five steps in redux.sync.
extern "C" __global__ void isum_tree(const int* x, int* y) {
    __shared__ int buf[128];
    unsigned t = threadIdx.x;
    buf[t] = x[t];
    __syncthreads();
    for (unsigned s = 64; s >= 32; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t < 32) {
        int v = buf[t];
        v += __shfl_down_sync(0xffffffffu, v, 16);
        v = __reduce_add_sync(0xffffffffu, t < 16 ? v : 0);
        if (t == 0) y[0] = v;
    }
}
// Drops x[127].
extern "C" __global__ void isum_tree_dropped(const int* x, int* y) {
    __shared__ int buf[128];
    unsigned t = threadIdx.x;
    buf[t] = t == 127 ? 0 : x[t];
    __syncthreads();
    for (unsigned s = 64; s > 0; s >>= 1) {
        if (t < s) buf[t] += buf[t + s];
        __syncthreads();
    }
    if (t == 0) y[0] = buf[0];
}
// Exclusive prefix sums of 64 values: serial, and Hillis-Steele with two buffers.
extern "C" __global__ void iscan_serial(const int* x, int* y) {
    int s = 0;
    for (int i = 0; i < 64; ++i) { y[i] = s; s += x[i]; }
}
extern "C" __global__ void iscan_hillis_steele(const int* x, int* y) {
    __shared__ int a[64], b[64];
    unsigned t = threadIdx.x;
    a[t] = t == 0 ? 0 : x[t - 1];
    __syncthreads();
    int* in = a; int* out = b;
    for (unsigned d = 1; d < 64; d <<= 1) {
        out[t] = t >= d ? in[t] + in[t - d] : in[t];
        __syncthreads();
        int* tmp = in; in = out; out = tmp;
    }
    y[t] = in[t];
}
// Off by one: an inclusive scan.
extern "C" __global__ void iscan_inclusive(const int* x, int* y) {
    __shared__ int a[64], b[64];
    unsigned t = threadIdx.x;
    a[t] = x[t];
    __syncthreads();
    int* in = a; int* out = b;
    for (unsigned d = 1; d < 64; d <<= 1) {
        out[t] = t >= d ? in[t] + in[t - d] : in[t];
        __syncthreads();
        int* tmp = in; in = out; out = tmp;
    }
    y[t] = in[t];
}
// An 8x8 integer matrix product, two ways, and a max-plus variant.
extern "C" __global__ void imatmul_serial(const int* a, const int* b, int* c) {
    for (int i = 0; i < 8; ++i)
        for (int j = 0; j < 8; ++j) {
            int s = 0;
            for (int k = 0; k < 8; ++k) s += a[i * 8 + k] * b[k * 8 + j];
            c[i * 8 + j] = s;
        }
}
extern "C" __global__ void imatmul_tiled(const int* a, const int* b, int* c) {
    __shared__ int sa[64], sb[64];
    unsigned t = threadIdx.x, i = t / 8, j = t % 8;
    sa[t] = a[t];
    sb[t] = b[t];
    __syncthreads();
    int s = 0;
    for (int k = 7; k >= 0; --k) s += sa[i * 8 + k] * sb[k * 8 + j];
    c[t] = s;
}
// Integer maximum with a data-dependent select, and integers turned into floats.
extern "C" __global__ void imax_scale(const int* x, float* y) {
    int m = x[0];
    for (int i = 1; i < 32; ++i) m = x[i] > m ? x[i] : m;
    y[0] = (float)m * 0.5f;
}
extern "C" __global__ void imax_scale_warp(const int* x, float* y) {
    int m = __reduce_max_sync(0xffffffffu, x[threadIdx.x]);
    if (threadIdx.x == 0) y[0] = (float)m / 2.0f;
}
// Bits of the data: outside the model.
extern "C" __global__ void ixor(const int* x, int* y) {
    y[threadIdx.x] = x[threadIdx.x] ^ 0x5a5a;
}
// Data as an index: a histogram's bins depend on the data.
extern "C" __global__ void ihistogram(const int* x, int* bins) {
    atomicAdd(&bins[x[threadIdx.x] % 16], 1);
}
