// Compare-and-swap loops: the float atomic max (and the others the hardware
// lacks) as CUDA code writes them, against serial references. tileverify
// reads a CAS retry loop that applies one operation to the value it read as
// that one atomic read-modify-write (docs/evaluator.md, "Compare-and-swap
// loops"). PTX: tools/regen_ptx.sh (nvcc 13, -O3 -arch=sm_90).
#include <math.h>

#define N 128  // values per CTA

// The idiom of the CUDA C++ Programming Guide ("Atomic Functions"), with fmaxf.
__device__ __forceinline__ float max_by_cas(float* addr, float val) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(fmaxf(val, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ __forceinline__ float min_by_cas(float* addr, float val) {
  int* a = (int*)addr;
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(fminf(val, __int_as_float(assumed))));
  } while (assumed != old);
  return __int_as_float(old);
}

__device__ __forceinline__ float add_by_cas(float* addr, float val) {
  unsigned* a = (unsigned*)addr;
  unsigned old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_uint(val + __uint_as_float(assumed)));
  } while (assumed != old);
  return __uint_as_float(old);
}

// The Programming Guide's atomicAdd for double (before sm_60).
__device__ __forceinline__ double add_by_cas(double* address, double val) {
  unsigned long long* a = (unsigned long long*)address;
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, __double_as_longlong(val + __longlong_as_double(assumed)));
  } while (assumed != old);
  return __longlong_as_double(old);
}

// References: one thread per CTA, in order.
extern "C" __global__ void max_ref(const float* x, float* y) {
  if (threadIdx.x != 0) return;
  float m = -INFINITY;
  for (int i = 0; i < N; ++i) m = fmaxf(m, x[blockIdx.x * N + i]);
  y[blockIdx.x] = m;
}

extern "C" __global__ void sum_ref_f64(const double* x, double* y) {
  if (threadIdx.x != 0) return;
  double s = 0.0;
  for (int i = 0; i < N; ++i) s += x[blockIdx.x * N + i];
  y[blockIdx.x] = s;
}

// The block's maximum through a float max by CAS on shared memory.
extern "C" __global__ void max_cas_block(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  max_by_cas(&m, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// The block's sum through the double atomicAdd by CAS.
extern "C" __global__ void sum_cas_block_f64(const double* x, double* y) {
  __shared__ double s;
  int t = threadIdx.x;
  if (t == 0) s = 0.0;
  __syncthreads();
  add_by_cas(&s, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = s;
}

// Bug: the CAS loop adds where the reference takes the maximum.
extern "C" __global__ void add_cas_block(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = 0.0f;
  __syncthreads();
  add_by_cas(&m, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// Bug: one attempt and no retry. A thread whose CAS finds another value
// than it read loses its update, so the result depends on the schedule.
extern "C" __global__ void max_cas_once(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  int* a = (int*)&m;
  int old = *a;
  atomicCAS(a, old, __float_as_int(fmaxf(x[blockIdx.x * N + t], __int_as_float(old))));
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// Bug: half the threads take the maximum, half the minimum: the two updates
// do not commute, so the result depends on their order.
extern "C" __global__ void max_min_cas(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  if (t % 2 == 0) max_by_cas(&m, x[blockIdx.x * N + t]);
  else min_by_cas(&m, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// Bug: the CAS compares with the new value's bits instead of the value read,
// so it succeeds only when memory already holds the maximum: a loop that
// waits rather than updates (tileverify does not read it as an update).
extern "C" __global__ void max_cas_wrong_compare(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  int* a = (int*)&m;
  float v = x[blockIdx.x * N + t];
  int old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, __float_as_int(v), __float_as_int(fmaxf(v, __int_as_float(assumed))));
  } while (assumed != old);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// The old value each thread's CAS loop saw, written out: it depends on the
// order of the threads.
extern "C" __global__ void max_cas_old(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  y[blockIdx.x * N + t] = max_by_cas(&m, x[blockIdx.x * N + t]);
}

// The block's minimum by CAS (nvcc leaves this loop with a branch out and
// goes back with bra.uni), against the serial minimum.
extern "C" __global__ void min_ref(const float* x, float* y) {
  if (threadIdx.x != 0) return;
  float m = INFINITY;
  for (int i = 0; i < N; ++i) m = fminf(m, x[blockIdx.x * N + i]);
  y[blockIdx.x] = m;
}

extern "C" __global__ void min_cas_block(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = INFINITY;
  __syncthreads();
  min_by_cas(&m, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// A spin lock (acquired by atomicCAS(lock, 0, 1), released by atomicExch):
// a thread waits for another, which tileverify does not model.
extern "C" __global__ void max_by_lock(const float* x, float* y, int* lock) {
  while (atomicCAS(lock, 0, 1) != 0) {
  }
  y[blockIdx.x] = fmaxf(y[blockIdx.x], x[blockIdx.x * N + threadIdx.x]);
  __threadfence();
  atomicExch(lock, 0);
}

// A float max written as "CAS while val is larger than what the CAS saw"
// (no write once memory holds as much): nvcc tests val > old as a float
// comparison before the loop and at its end. Read as one atomic max too.
extern "C" __global__ void max_cas_while_greater(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = -INFINITY;
  __syncthreads();
  int* a = (int*)&m;
  float val = x[blockIdx.x * N + t];
  int old = *a, assumed;
  while (val > __int_as_float(old)) {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(val));
  }
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// The same form for a minimum.
extern "C" __global__ void min_cas_while_less(const float* x, float* y) {
  __shared__ float m;
  int t = threadIdx.x;
  if (t == 0) m = INFINITY;
  __syncthreads();
  int* a = (int*)&m;
  float val = x[blockIdx.x * N + t];
  int old = *a, assumed;
  while (val < __int_as_float(old)) {
    assumed = old;
    old = atomicCAS(a, assumed, __float_as_int(val));
  }
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// An integer maximum by a 64-bit CAS loop (atomicMax on unsigned long long
// exists from sm_35 on; older code wrote this), over integer data.
__device__ __forceinline__ void umax64_by_cas(unsigned long long* a, unsigned long long val) {
  unsigned long long old = *a, assumed;
  do {
    assumed = old;
    old = atomicCAS(a, assumed, assumed > val ? assumed : val);
  } while (assumed != old);
}

extern "C" __global__ void umax_ref(const unsigned* x, unsigned long long* y) {
  if (threadIdx.x != 0) return;
  unsigned long long m = 0;
  for (int i = 0; i < N; ++i) m = m > x[blockIdx.x * N + i] ? m : x[blockIdx.x * N + i];
  y[blockIdx.x] = m;
}

extern "C" __global__ void umax_cas_block(const unsigned* x, unsigned long long* y) {
  __shared__ unsigned long long m;
  int t = threadIdx.x;
  if (t == 0) m = 0;
  __syncthreads();
  umax64_by_cas(&m, x[blockIdx.x * N + t]);
  __syncthreads();
  if (t == 0) y[blockIdx.x] = m;
}

// Over the whole grid: the reference's CTA 0 takes the maximum of y[0] and
// every x in one thread; the CAS kernel's threads each apply a max by CAS to
// y[0], from every CTA.
extern "C" __global__ void max_ref_grid(const float* x, float* y) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  float m = y[0];
  for (int i = 0; i < N * (int)gridDim.x; ++i) m = fmaxf(m, x[i]);
  y[0] = m;
}

extern "C" __global__ void max_cas_grid(const float* x, float* y) {
  max_by_cas(y, x[blockIdx.x * blockDim.x + threadIdx.x]);
}

// Bug over the grid: odd CTAs take the minimum.
extern "C" __global__ void max_min_cas_grid(const float* x, float* y) {
  if (blockIdx.x % 2 == 0) max_by_cas(y, x[blockIdx.x * blockDim.x + threadIdx.x]);
  else min_by_cas(y, x[blockIdx.x * blockDim.x + threadIdx.x]);
}
