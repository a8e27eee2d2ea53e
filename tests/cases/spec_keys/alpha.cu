// A float scalar the check holds for every value of ("symbolic": true): the
// reference multiplies by alpha at the end, the kernel scales first.
// nvcc -arch=sm_80 -ptx -lineinfo alpha.cu -o alpha.ptx
extern "C" __global__ void axpy_ref(const float* x, const float* y, float* out, float alpha) {
    int i = threadIdx.x;
    out[i] = (x[i] + y[i]) * alpha;
}

extern "C" __global__ void axpy_scaled(const float* x, const float* y, float* out, float alpha) {
    int i = threadIdx.x;
    out[i] = alpha * x[i] + alpha * y[i];
}

// alpha applied to x only: wrong unless alpha is 1 or y is 0.
extern "C" __global__ void axpy_half_scaled(const float* x, const float* y, float* out, float alpha) {
    int i = threadIdx.x;
    out[i] = alpha * x[i] + y[i];
}
