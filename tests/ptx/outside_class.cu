// Kernels outside the structured-CTA class, for tests/ptx/outside_class_test.cpp
// and the tests/cases/outside_class_*.json specs; outside_class.ptx is
// nvcc -arch=sm_80 -O3 -rdc=true -lineinfo -ptx outside_class.cu (CUDA 13.0).
// -rdc=true (relocatable device code) is what device-side launches and calls
// to functions of other files need. Each must be `unsupported`, with a
// message that names the construct.
#include <cooperative_groups.h>
#include <cstdio>

namespace cg = cooperative_groups;

// cooperative_groups::this_grid().sync(): nvcc 13 reads the grid barrier's
// address from %envreg1 and %envreg2 and spins on a counter in global memory.
extern "C" __global__ void grid_sync(const float* x, float* y) {
  cg::grid_group g = cg::this_grid();
  unsigned t = unsigned(g.thread_rank());
  y[t] = x[t];
  g.sync();
  y[t] += y[(t + 1) % unsigned(g.size())];
}

// printf: a call to the CUDA runtime's vprintf.
extern "C" __global__ void print(const float* x, float* y) {
  unsigned t = threadIdx.x;
  printf("thread %u reads %f\n", t, x[t]);
  y[t] = x[t];
}

__device__ __noinline__ float twice(float v) { return 2.0f * v; }
__device__ __noinline__ float thrice(float v) { return 3.0f * v; }
__device__ float (*table[2])(float) = {twice, thrice};

// A function pointer chosen by a parameter: the functions' addresses are moved
// into registers, and the call goes through a .callprototype.
extern "C" __global__ void function_pointer(const float* x, float* y, int which) {
  float (*f)(float) = which ? twice : thrice;
  unsigned t = threadIdx.x;
  y[t] = f(x[t]);
}

// A table of function pointers in __device__ memory.
extern "C" __global__ void function_table(const float* x, float* y, int which) {
  unsigned t = threadIdx.x;
  y[t] = table[which & 1](x[t]);
}

// A function pointer passed by the host: the indirect call itself is the
// first thing outside the class.
extern "C" __global__ void pointer_parameter(float (*f)(float), const float* x, float* y) {
  unsigned t = threadIdx.x;
  y[t] = f(x[t]);
}

// Dynamic parallelism: a kernel launched from device code.
extern "C" __global__ void child(float* y) { y[threadIdx.x] = 1.0f; }
extern "C" __global__ void launch_child(float* y) {
  if (threadIdx.x == 0) child<<<1, 32>>>(y);
}

// A function defined in another file (linked with -rdc).
extern "C" __device__ float elsewhere(float v);
extern "C" __global__ void call_elsewhere(const float* x, float* y) {
  unsigned t = threadIdx.x;
  y[t] = elsewhere(x[t]);
}
