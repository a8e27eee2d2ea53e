// Kernels whose reports must read like this source, not like nvcc's PTX
// (tests/cases/reports_test.cpp). README.md gives the commands.

// A block reduction missing the barrier between its two phases: a race on
// the function-local shared array (PTX name _ZZ4red5PKfPfE1s).
__global__ void red5(const float* x, float* y) {
  static __shared__ float s[32];
  int t = threadIdx.x;
  s[t] = x[t];
  if (t == 0) {
    float sum = 0;
    for (int i = 0; i < 32; ++i) sum += s[i];
    y[0] = sum;
  }
}

// A template kernel (mangled name _Z10sgemm_smemILi32EEvPKfS1_Pfi); the
// race is on its local shared tile.
template <int N>
__global__ void sgemm_smem(const float* a, const float* b, float* c, int n) {
  __shared__ float tile[N];
  int t = threadIdx.x;
  tile[t] = a[t] * b[t];
  c[t] = tile[(t + 1) % N] + n;
}
template __global__ void sgemm_smem<32>(const float*, const float*, float*, int);

// expf as nvcc compiles it (a range reduction), and two variants: the same
// function written differently, and a different one.
__global__ void exp_ref(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = expf(x[t]);
}
__global__ void exp_sum(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = expf(0.5f * x[t]) * expf(0.5f * x[t]);
}
__global__ void exp_wrong(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = expf(x[t]) * 2.0f;
}
