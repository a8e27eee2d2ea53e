// Kernels for tests/ptx/cp_async_test.cpp; cp_async.ptx is
// nvcc -arch=sm_80 -O3 -ptx cp_async.cu (CUDA 13.0).
#include <cuda_pipeline.h>

// 32 threads stage x[0..127] into shared memory, 16 bytes each, then read a
// neighbour's element: y[t] = x[(4t + 5) % 128].
extern "C" __global__ void staged(const float* x, float* y) {
  __shared__ __align__(16) float s[128];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t * 4], &x[t * 4], 16);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  __syncthreads();
  y[t] = s[(t * 4 + 5) % 128];
}

extern "C" __global__ void staged_ref(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = x[(t * 4 + 5) % 128];
}

// Reads its own copy before waiting for it.
extern "C" __global__ void no_wait(const float* x, float* y) {
  __shared__ __align__(16) float s[32];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &x[t], 4);
  __pipeline_commit();
  y[t] = s[t];
  __pipeline_wait_prior(0);
}

// Waits, but reads another thread's copy without a barrier.
extern "C" __global__ void no_barrier(const float* x, float* y) {
  __shared__ __align__(16) float s[32];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &x[t], 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  y[t] = s[(t + 1) % 32];
}

// Two groups: wait_group 1 retires the first, so stage 0 may be read; the
// second stage is read after wait_group 0. y[t] = x[t+1] + x[32 + (t+1)%32].
extern "C" __global__ void two_stages(const float* x, float* y) {
  __shared__ __align__(16) float s[2][32];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[0][t], &x[t], 4);
  __pipeline_commit();
  __pipeline_memcpy_async(&s[1][t], &x[32 + t], 4);
  __pipeline_commit();
  __pipeline_wait_prior(1);
  __syncthreads();
  float a = s[0][(t + 1) % 32];
  __pipeline_wait_prior(0);
  __syncthreads();
  y[t] = a + s[1][(t + 1) % 32];
}

// The bug: the second stage is read while its group may still be in flight.
extern "C" __global__ void two_stages_early(const float* x, float* y) {
  __shared__ __align__(16) float s[2][32];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[0][t], &x[t], 4);
  __pipeline_commit();
  __pipeline_memcpy_async(&s[1][t], &x[32 + t], 4);
  __pipeline_commit();
  __pipeline_wait_prior(1);
  __syncthreads();
  y[t] = s[0][(t + 1) % 32] + s[1][(t + 1) % 32];
  __pipeline_wait_prior(0);
}

extern "C" __global__ void two_stages_ref(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = x[(t + 1) % 32] + x[32 + (t + 1) % 32];
}

// Zero fill: threads at or past n copy nothing and get zeros (the copy's
// source size is 0). y[t] = t < n ? x[t] : 0.
extern "C" __global__ void zero_fill(const float* x, float* y, int n) {
  __shared__ __align__(16) float s[32];
  int t = threadIdx.x;
  __pipeline_memcpy_async(&s[t], &x[t < n ? t : 0], 4, t < n ? 0 : 4);
  __pipeline_commit();
  __pipeline_wait_prior(0);
  y[t] = s[t];
}
