// Float scalar arguments: y = x * s against y = x * 1.5f, and an update that
// drops its beta term. Regenerate: nvcc -arch=sm_80 -O3 -ptx scalars.cu -o scalars.ptx
extern "C" __global__ void scale_by_param(const float* x, float* y, float s) { y[threadIdx.x] = x[threadIdx.x] * s; }
extern "C" __global__ void scale_by_1_5(const float* x, float* y, float s) { y[threadIdx.x] = x[threadIdx.x] * 1.5f; }
extern "C" __global__ void axpby(const float* x, float* y, float b) { y[threadIdx.x] = x[threadIdx.x] + b * y[threadIdx.x]; }
extern "C" __global__ void axpby_drops_beta(const float* x, float* y, float b) { y[threadIdx.x] = x[threadIdx.x]; }
extern "C" __global__ void scale_by_param_f64(const double* x, double* y, double s) { y[threadIdx.x] = x[threadIdx.x] * s; }
extern "C" __global__ void scale_by_1_5_f64(const double* x, double* y, double s) { y[threadIdx.x] = x[threadIdx.x] * 1.5; }
