// A filter in __constant__ memory (filled by cudaMemcpyToSymbol on the host)
// against the same filter passed as a pointer.
// Regenerate: nvcc -arch=sm_80 -O3 -ptx constant_filter.cu -o constant_filter.ptx
__constant__ float c_w[3];
extern "C" __global__ void conv_param(const float* x, const float* w, float* y) {
    unsigned i = threadIdx.x;
    y[i] = w[0] * x[i] + w[1] * x[i + 1] + w[2] * x[i + 2];
}
extern "C" __global__ void conv_const(const float* x, float* y) {
    unsigned i = threadIdx.x;
    float s = 0.0f;
    for (int k = 2; k >= 0; --k) s += c_w[k] * x[i + k];
    y[i] = s;
}
// Taps in the wrong order.
extern "C" __global__ void conv_const_flipped(const float* x, float* y) {
    unsigned i = threadIdx.x;
    float s = 0.0f;
    for (int k = 0; k < 3; ++k) s += c_w[2 - k] * x[i + k];
    y[i] = s;
}
