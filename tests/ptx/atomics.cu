// Kernels for tests/ptx/atomics_test.cpp; atomics.ptx is
// nvcc -arch=sm_80 -O3 -ptx atomics.cu (CUDA 13.0).

// y[0] = sum of x through a shared atomic accumulator; y[1] += the same sum
// through a global atomic; y[2..5] = a histogram of t % 4 counted with
// integer atomics; y[6] = the largest t * 3 % 7 (atomicMax).
extern "C" __global__ void sum_atomic(const float* x, float* y) {
  __shared__ float s;
  __shared__ unsigned hist[4];
  __shared__ int mx;
  int t = threadIdx.x;
  if (t == 0) { s = 0.0f; mx = -1; }
  if (t < 4) hist[t] = 0;
  __syncthreads();
  atomicAdd(&s, x[t]);
  atomicAdd(&hist[t % 4], 1u);
  atomicMax(&mx, t * 3 % 7);
  atomicAdd(&y[1], x[t]);
  __syncthreads();
  if (t == 0) y[0] = s;
  if (t < 4) y[2 + t] = (float)hist[t];
  if (t == 0) y[6] = (float)mx;
}

// The same results with plain loops in one thread.
extern "C" __global__ void sum_ref(const float* x, float* y) {
  if (threadIdx.x != 0) return;
  float a = 0.0f;
  for (int i = 0; i < 32; ++i) a += x[i];
  y[0] = a;
  y[1] += a;
  for (int i = 0; i < 4; ++i) y[2 + i] = 8.0f;
  int m = -1;
  for (int i = 0; i < 32; ++i) m = max(m, i * 3 % 7);
  y[6] = (float)m;
}

// The barrier between the atomics and the plain read is missing.
extern "C" __global__ void sum_atomic_nobar(const float* x, float* y) {
  __shared__ float s;
  int t = threadIdx.x;
  if (t == 0) s = 0.0f;
  __syncthreads();
  atomicAdd(&s, x[t]);
  if (t == 0) y[0] = s;
}

// Stream compaction by tickets: where x[t] lands depends on the schedule.
extern "C" __global__ void ticket(const float* x, float* y) {
  __shared__ unsigned n;
  int t = threadIdx.x;
  if (t == 0) n = 0;
  __syncthreads();
  unsigned k = atomicAdd(&n, 1u);
  y[k] = x[t];
}

// The old value an atomic returns, written out: a partial sum whose terms
// depend on the schedule.
extern "C" __global__ void prefix_by_atomic(const float* x, float* y) {
  __shared__ float s;
  int t = threadIdx.x;
  if (t == 0) s = 0.0f;
  __syncthreads();
  y[t] = atomicAdd(&s, x[t]);
}
