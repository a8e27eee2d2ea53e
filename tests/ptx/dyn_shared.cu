// Kernels for tests/ptx/nvcc_forms_test.cpp; dyn_shared.ptx is
// nvcc -arch=sm_80 -O3 -ptx dyn_shared.cu (CUDA 13.0). The file declares one
// extern __shared__ array; only reverse_dyn uses it.
extern __shared__ float smem[];

// y = x reversed, through dynamic shared memory (blockDim.x floats).
extern "C" __global__ void reverse_dyn(const float* x, float* y) {
  int t = threadIdx.x, n = blockDim.x;
  smem[t] = x[t];
  __syncthreads();
  y[t] = smem[n - 1 - t];
}

// The same without shared memory.
extern "C" __global__ void reverse_direct(const float* x, float* y) {
  int t = threadIdx.x, n = blockDim.x;
  y[t] = x[n - 1 - t];
}
