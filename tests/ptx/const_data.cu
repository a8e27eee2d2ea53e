// Kernels for tests/ptx/const_data_test.cpp; const_data.ptx is
// nvcc -arch=sm_80 -O3 -ptx const_data.cu (CUDA 13.0).
#include <cuda_fp16.h>

__constant__ float weights[4] = {1.0f, 2.0f, 0.5f, -3.0f};
__constant__ float scale = 2.5f;
__constant__ int offsets[4] = {3, -1, 0, 2};
__device__ float bias[3] = {4.0f, 5.0f, 6.0f};
__constant__ float from_host[4];  // filled by cudaMemcpyToSymbol

// y[t] = x[t] * weights[t % 4] * scale + bias[t % 3] + x[(t + offsets[t % 4]) % 8]
extern "C" __global__ void tables(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = x[t] * weights[t % 4] * scale + bias[t % 3] + x[(t + 8 + offsets[t % 4]) % 8];
}

extern "C" __global__ void tables_ref(const float* x, float* y) {
  int t = threadIdx.x;
  float w = t % 4 == 0 ? 1.0f : t % 4 == 1 ? 2.0f : t % 4 == 2 ? 0.5f : -3.0f;
  int o = t % 4 == 0 ? 3 : t % 4 == 1 ? -1 : t % 4 == 2 ? 0 : 2;
  y[t] = x[t] * w * 2.5f + (4.0f + (t % 3)) + x[(t + 8 + o) % 8];
}

extern "C" __global__ void host_table(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = x[t] * from_host[t % 4];
}
