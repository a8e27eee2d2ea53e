// Template kernels have mangled names (_Z9tile_copyILi32EEvPKfPf); a spec may
// name them as written in C++, tile_copy<32>. The two overloads of
// twice share the demangled base name "twice": naming them so is ambiguous.
// nvcc -arch=sm_80 -ptx -lineinfo templates.cu -o templates.ptx
template <int B>
__global__ void tile_copy(const float* x, float* y) {
    y[blockIdx.x * B + threadIdx.x] = x[blockIdx.x * B + threadIdx.x];
}
template __global__ void tile_copy<32>(const float*, float*);
template __global__ void tile_copy<64>(const float*, float*);

extern "C" __global__ void copy_plain(const float* x, float* y) {
    y[threadIdx.x] = 1.0f * x[threadIdx.x];
}

__global__ void twice(const float* x, float* y) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }
__global__ void twice(const double* x, double* y) { y[threadIdx.x] = 2.0 * x[threadIdx.x]; }
