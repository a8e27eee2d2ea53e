// Kernels for tests/ptx/calls_test.cpp; calls.ptx is
// nvcc -arch=sm_80 -O3 -ptx calls.cu (CUDA 13.0).

// A loop with labels, called twice: each inlined copy needs its own labels
// and registers.
__device__ __noinline__ float dot(const float* a, const float* b, int n) {
  float s = 0.0f;
  for (int i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// Calls another function, returns a value and writes through a pointer.
__device__ __noinline__ float scaled_dot(const float* a, const float* b, int n, float k, float* side) {
  float d = dot(a, b, n);
  *side = d;
  return k * d;
}

// y[t] = 3 * (x[4t..4t+3] . w[0..3]) + (x[4t..4t+3] . w[4..7]); z[t] = the first dot.
extern "C" __global__ void calls(const float* x, const float* w, float* y, float* z) {
  int t = threadIdx.x;
  float a = scaled_dot(x + 4 * t, w, 4, 3.0f, z + t);
  float b = dot(x + 4 * t, w + 4, 4);
  y[t] = a + b;
}

extern "C" __global__ void calls_ref(const float* x, const float* w, float* y, float* z) {
  int t = threadIdx.x;
  float a = 0.0f, b = 0.0f;
  for (int i = 0; i < 4; ++i) a += x[4 * t + i] * w[i];
  for (int i = 0; i < 4; ++i) b += x[4 * t + i] * w[4 + i];
  z[t] = a;
  y[t] = 3.0f * a + b;
}

// Only some threads call: a predicated branch around the call.
extern "C" __global__ void calls_some(const float* x, const float* w, float* y, float* z) {
  int t = threadIdx.x;
  y[t] = t % 2 ? dot(x + 4 * t, w, 4) : 0.0f;
}

extern "C" __global__ void calls_some_ref(const float* x, const float* w, float* y, float* z) {
  int t = threadIdx.x;
  float a = 0.0f;
  for (int i = 0; i < 4; ++i) a += x[4 * t + i] * w[i];
  y[t] = t % 2 ? a : 0.0f;
}

__device__ __noinline__ float fact(float v, int n) { return n <= 1 ? v : n * fact(v, n - 1); }

extern "C" __global__ void recursive(const float* x, const float* w, float* y, float* z) {
  y[threadIdx.x] = fact(x[threadIdx.x], 3);
}
