// Payload mode on a GPU: the same templated kernels run on float and on
// tileverify::fpsan::f32, timed with CUDA events. Prints the slowdown factor
// of payload mode (docs/fpsan.md quotes it). Exit code 77 without a GPU.
//   nvcc -std=c++17 -O3 -arch=sm_90 -I include bench/payload_gpu_bench.cu -o payload_gpu_bench
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "tileverify/fpsan.hpp"

using tileverify::fpsan::f32;

// A shared-memory tiled GEMM (ring operations only).
template <class T, int TILE>
__global__ void gemm(const T* a, const T* b, T* c, int n) {
  __shared__ T sa[TILE][TILE], sb[TILE][TILE];
  const int row = blockIdx.y * TILE + threadIdx.y, col = blockIdx.x * TILE + threadIdx.x;
  T acc = T(0.0f);
  for (int k0 = 0; k0 < n; k0 += TILE) {
    sa[threadIdx.y][threadIdx.x] = a[row * n + k0 + threadIdx.x];
    sb[threadIdx.y][threadIdx.x] = b[(k0 + threadIdx.y) * n + col];
    __syncthreads();
    for (int k = 0; k < TILE; ++k) acc = acc + sa[threadIdx.y][k] * sb[k][threadIdx.x];
    __syncthreads();
  }
  c[row * n + col] = acc;
}

// Online softmax over rows (exp, max, division).
template <class T>
__global__ void softmax_rows(const T* x, T* y, int n) {
  const T* r = x + blockIdx.x * n;
  T m = r[0], l = T(0.0f);
  for (int j = 0; j < n; ++j) {
    const T m_new = fmaxf(m, r[j]);
    l = l * expf(m - m_new) + expf(r[j] - m_new);
    m = m_new;
  }
  for (int j = threadIdx.x; j < n; j += blockDim.x) y[blockIdx.x * n + j] = expf(r[j] - m) / l;
}

// Milliseconds per call of launch(), over 10 calls after one warm-up.
template <class F>
float time_ms(F launch) {
  launch();
  cudaEvent_t e0, e1;
  cudaEventCreate(&e0);
  cudaEventCreate(&e1);
  cudaEventRecord(e0);
  for (int i = 0; i < 10; ++i) launch();
  cudaEventRecord(e1);
  cudaEventSynchronize(e1);
  float ms = 0;
  cudaEventElapsedTime(&ms, e0, e1);
  cudaEventDestroy(e0);
  cudaEventDestroy(e1);
  return ms / 10;
}

template <class T>
float time_gemm(int n) {
  T *a, *b, *c;
  cudaMalloc(&a, sizeof(T) * n * n);
  cudaMalloc(&b, sizeof(T) * n * n);
  cudaMalloc(&c, sizeof(T) * n * n);
  cudaMemset(a, 0, sizeof(T) * n * n);
  cudaMemset(b, 0, sizeof(T) * n * n);
  dim3 block(16, 16), grid(n / 16, n / 16);
  float ms = time_ms([&] { gemm<T, 16><<<grid, block>>>(a, b, c, n); });
  cudaFree(a);
  cudaFree(b);
  cudaFree(c);
  return ms;
}

template <class T>
float time_softmax(int rows, int n) {
  T *x, *y;
  cudaMalloc(&x, sizeof(T) * rows * n);
  cudaMalloc(&y, sizeof(T) * rows * n);
  cudaMemset(x, 0, sizeof(T) * rows * n);
  float ms = time_ms([&] { softmax_rows<T><<<rows, 128>>>(x, y, n); });
  cudaFree(x);
  cudaFree(y);
  return ms;
}

int main() {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::puts("payload_gpu_bench: no CUDA device, skipped");
    return 77;
  }
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("device: %s\n", p.name);
  std::printf("| kernel | float (ms) | fpsan::f32 (ms) | slowdown |\n|---|---:|---:|---:|\n");
  for (int n : {1024, 2048}) {
    float f = time_gemm<float>(n), q = time_gemm<f32>(n);
    std::printf("| tiled GEMM %dx%dx%d | %.3f | %.3f | %.2fx |\n", n, n, n, f, q, q / f);
  }
  {
    float f = time_softmax<float>(4096, 1024), q = time_softmax<f32>(4096, 1024);
    std::printf("| online softmax 4096 rows x 1024 | %.3f | %.3f | %.2fx |\n", f, q, q / f);
  }
  return cudaGetLastError() == cudaSuccess ? 0 : 2;
}
