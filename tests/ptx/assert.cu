// Kernels for tests/ptx/nvcc_forms_test.cpp; assert.ptx is
// nvcc -arch=sm_80 -O3 -lineinfo -ptx assert.cu (CUDA 13.0). A device
// assert() is a branch around a call to the runtime's __assertfail, with the
// message, file and function as $str byte arrays.
#include <cassert>

// y[t] = 2 x[t], asserting t < n: with n >= the block size the assert holds.
extern "C" __global__ void checked_double(const float* x, float* y, int n) {
  int t = threadIdx.x;
  assert(t < n);
  y[t] = 2.0f * x[t];
}

extern "C" __global__ void plain_double(const float* x, float* y, int n) {
  int t = threadIdx.x;
  if (t < n) y[t] = x[t] + x[t];
}

// The assert in a function that is not inlined (a call to a .func).
__device__ __noinline__ void check_index(int i, int n) { assert(i >= 0 && i < n); }

extern "C" __global__ void checked_in_func(const float* x, float* y, int n) {
  int t = threadIdx.x;
  check_index(t + 4, n);
  y[t] = 2.0f * x[t];
}

// __trap(): thread 5 stops the kernel.
extern "C" __global__ void traps(const float* x, float* y, int n) {
  int t = threadIdx.x;
  if (t == 5) __trap();
  y[t] = 2.0f * x[t];
}
