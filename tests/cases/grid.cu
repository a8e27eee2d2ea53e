// Whole-grid checks ("ctas": "all"): CTAs that map to tiles differently, CTAs
// that write the same elements, and atomics from every CTA.
// Regenerate: nvcc -arch=sm_80 -O3 -ptx grid.cu -o grid.ptx
extern "C" __global__ void scale_tiles(const float* x, float* y) {
    unsigned i = blockIdx.x * 32 + threadIdx.x;
    y[i] = 2.0f * x[i];
}
// CTA b handles tile gridDim.x - 1 - b: the same function, a different mapping.
extern "C" __global__ void scale_tiles_reversed(const float* x, float* y) {
    unsigned i = (gridDim.x - 1 - blockIdx.x) * 32 + threadIdx.x;
    y[i] = x[i] + x[i];
}
// Every CTA writes y[0..31]: a race between CTAs.
extern "C" __global__ void scale_tiles_overlapping(const float* x, float* y) {
    y[threadIdx.x] = 2.0f * x[blockIdx.x * 32 + threadIdx.x];
}
extern "C" __global__ void sum_atomic(const float* x, float* y) {
    atomicAdd(y, x[blockIdx.x * 32 + threadIdx.x]);
}
extern "C" __global__ void sum_serial(const float* x, float* y) {
    float s = y[0];
    for (int i = 0; i < 128; ++i) s += x[i];
    y[0] = s;
}
