// The running max written with `if`, from -INFINITY, with a runtime trip
// count (llm.c's and flash-attention-minimal's softmax do this), against
// fmaxf. Regenerate: nvcc -arch=sm_80 -O3 -ptx running_max_if.cu -o running_max_if.ptx
#include <math.h>
extern "C" __global__ void softmax_if_max(const float* x, float* y, int n) {
    float m = -INFINITY;
    for (int j = 0; j < n; ++j)
        if (x[j] > m) m = x[j];
    float s = 0.f;
    for (int j = 0; j < n; ++j) s += expf(x[j] - m);
    y[threadIdx.x] = expf(x[threadIdx.x] - m) / s;
}
extern "C" __global__ void softmax_fmaxf(const float* x, float* y, int n) {
    float m = x[0];
    for (int j = 1; j < n; ++j) m = fmaxf(m, x[j]);
    float s = 0.f;
    for (int j = 0; j < n; ++j) s += expf(x[j] - m);
    y[threadIdx.x] = expf(x[threadIdx.x] - m) / s;
}
