// The last step of cuda-samples' reduce7 (NVIDIA/cuda-samples#398): the four
// lanes of a ballot mask shuffle down by 16, 8, ... and read lanes outside the
// mask, whose values CUDA leaves undefined.
// Regenerate: nvcc -arch=sm_80 -O3 -ptx shfl_mask.cu -o shfl_mask.ptx
extern "C" __global__ void sum4_outside_mask(const float* x, float* y) {
    unsigned t = threadIdx.x;
    unsigned mask = __ballot_sync(0xffffffffu, t < 4);
    if (t < 4) {
        float v = x[t];
        for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(mask, v, off);
        if (t == 0) y[0] = v;
    }
}
// Within the mask: offsets 2 and 1 only.
extern "C" __global__ void sum4_in_mask(const float* x, float* y) {
    unsigned t = threadIdx.x;
    unsigned mask = __ballot_sync(0xffffffffu, t < 4);
    if (t < 4) {
        float v = x[t];
        for (int off = 2; off > 0; off /= 2) v += __shfl_down_sync(mask, v, off);
        if (t == 0) y[0] = v;
    }
}
extern "C" __global__ void sum4_serial(const float* x, float* y) {
    y[0] = x[0] + x[1] + x[2] + x[3];
}
