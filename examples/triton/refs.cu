// Naive references for the Triton corpus (examples/triton): one thread per
// output element or row, written the obvious way. refs.ptx is
//   nvcc -arch=sm_80 -ptx -lineinfo refs.cu -o refs.ptx
#include <cuda_fp16.h>

extern "C" __global__ void vadd_ref(const float* x, const float* y, float* out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = x[i] + y[i];
}

// One thread per row.
extern "C" __global__ void softmax_ref(const float* x, float* y, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float m = xr[0];
  for (int c = 1; c < cols; ++c) m = fmaxf(m, xr[c]);
  float s = 0.f;
  for (int c = 0; c < cols; ++c) s += expf(xr[c] - m);
  for (int c = 0; c < cols; ++c) y[r * cols + c] = expf(xr[c] - m) / s;
}

extern "C" __global__ void layernorm_ref(const float* x, const float* w, const float* b, float* y, int rows, int cols,
                                         float eps) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  const float* xr = x + r * cols;
  float mean = 0.f;
  for (int c = 0; c < cols; ++c) mean += xr[c];
  mean /= cols;
  float var = 0.f;
  for (int c = 0; c < cols; ++c) var += (xr[c] - mean) * (xr[c] - mean);
  var /= cols;
  float rstd = 1.f / sqrtf(var + eps);
  for (int c = 0; c < cols; ++c) y[r * cols + c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

// C[M][N] = A[M][K] * B[K][N], row-major, one thread per element of C.
template <class T>
__device__ void matmul_ref(const T* a, const T* b, float* c, int M, int N, int K) {
  int i = blockIdx.y * blockDim.y + threadIdx.y, j = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= M || j >= N) return;
  float acc = 0.f;
  for (int k = 0; k < K; ++k) acc += float(a[i * K + k]) * float(b[k * N + j]);
  c[i * N + j] = acc;
}
extern "C" __global__ void matmul_ref_f16(const __half* a, const __half* b, float* c, int M, int N, int K) {
  matmul_ref(a, b, c, M, N, K);
}
extern "C" __global__ void matmul_ref_f32(const float* a, const float* b, float* c, int M, int N, int K) {
  matmul_ref(a, b, c, M, N, K);
}

// Attention for one head: o = softmax(scale * q k^T) v, one thread per query row.
extern "C" __global__ void attention_ref(const __half* q, const __half* k, const __half* v, float* o, float scale,
                                         int seq, int head) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= seq) return;
  float m = -INFINITY;
  for (int j = 0; j < seq; ++j) {
    float s = 0.f;
    for (int d = 0; d < head; ++d) s += float(q[r * head + d]) * float(k[j * head + d]);
    m = fmaxf(m, s * scale);
  }
  float l = 0.f;
  for (int j = 0; j < seq; ++j) {
    float s = 0.f;
    for (int d = 0; d < head; ++d) s += float(q[r * head + d]) * float(k[j * head + d]);
    l += expf(s * scale - m);
  }
  for (int d = 0; d < head; ++d) {
    float acc = 0.f;
    for (int j = 0; j < seq; ++j) {
      float s = 0.f;
      for (int e = 0; e < head; ++e) s += float(q[r * head + e]) * float(k[j * head + e]);
      acc += expf(s * scale - m) * float(v[j * head + d]);
    }
    o[r * head + d] = acc / l;
  }
}

// attention_ref, and each row's log-sum-exp in base 2 (what Triton's
// attention tutorial stores for the backward pass): log2(sum_j e^(s_j)) with
// s_j = q.k_j * scale, computed as m * log2(e) + log2(sum_j e^(s_j - m)).
template <bool kBaseE>
__device__ void attention_lse_row(const __half* q, const __half* k, const __half* v, float* o, float* lse, float scale,
                                  int seq, int head) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= seq) return;
  float m = -INFINITY;
  for (int j = 0; j < seq; ++j) {
    float s = 0.f;
    for (int d = 0; d < head; ++d) s += float(q[r * head + d]) * float(k[j * head + d]);
    m = fmaxf(m, s * scale);
  }
  float l = 0.f;
  for (int j = 0; j < seq; ++j) {
    float s = 0.f;
    for (int d = 0; d < head; ++d) s += float(q[r * head + d]) * float(k[j * head + d]);
    l += expf(s * scale - m);
  }
  for (int d = 0; d < head; ++d) {
    float acc = 0.f;
    for (int j = 0; j < seq; ++j) {
      float s = 0.f;
      for (int e = 0; e < head; ++e) s += float(q[r * head + e]) * float(k[j * head + e]);
      acc += expf(s * scale - m) * float(v[j * head + d]);
    }
    o[r * head + d] = acc / l;
  }
  lse[r] = kBaseE ? m + logf(l) : m * 1.44269504f + log2f(l);
}

extern "C" __global__ void attention_lse_ref(const __half* q, const __half* k, const __half* v, float* o,
                                             float* lse, float scale, int seq, int head) {
  attention_lse_row<false>(q, k, v, o, lse, scale, seq, head);
}

// A wrong twin: the log-sum-exp in base e (m + logf(l)) where Triton's
// kernel stores it in base 2; the outputs O are right.
extern "C" __global__ void attention_lse_ref_base_e(const __half* q, const __half* k, const __half* v, float* o,
                                                    float* lse, float scale, int seq, int head) {
  attention_lse_row<true>(q, k, v, o, lse, scale, seq, head);
}
