// Runs tma_pipeline.cu's kernels on a GPU (sm_90) against y = 2 x, to show
// what the specs beside it claim of them. Not built by CTest (no GPU there):
//
//   nvcc -std=c++17 -arch=sm_90a run_gpu.cu -o /tmp/run_gpu -lcuda && /tmp/run_gpu
//
// tma_scale_no_release is not run: it hangs (the deadlock its spec reports).
// An NVIDIA H200 (driver 580.159.04, 2026-11-26):
//   tma_scale (rows 32): 0 of 100 runs wrong
//   tma_scale (rows 64): 0 of 100 runs wrong
//   tma_scale_phase_no_mod2 (rows 64): 0 of 100 runs wrong
//   tma_scale_early_release (rows 32): 0 of 1000 runs wrong
// The early release is a race all the same (the TMA refill is slow next to
// the consumer's reads, so this GPU never showed it): no ordering the PTX
// memory model gives keeps the refill after the reads.
#include "tma_pipeline.cu"

#include <cuda.h>
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

namespace {

CUtensorMap map_of(float* x, int rows) {
  CUtensorMap m;
  cuuint64_t dims[2] = {32, cuuint64_t(rows)};
  cuuint64_t strides[1] = {32 * sizeof(float)};
  cuuint32_t box[2] = {32, 8}, estr[2] = {1, 1};
  CUresult r = cuTensorMapEncodeTiled(&m, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, x, dims, strides, box, estr,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) std::printf("cuTensorMapEncodeTiled: %d\n", int(r));
  return m;
}

template <class K>
void run(const char* name, K kernel, int rows, int times) {
  const int n = rows * 32;
  std::vector<float> hx(n), hy(n);
  for (int i = 0; i < n; ++i) hx[i] = float(i % 97) + 0.5f;
  float *x, *y;
  cudaMalloc(&x, n * sizeof(float));
  cudaMalloc(&y, n * sizeof(float));
  cudaMemcpy(x, hx.data(), n * sizeof(float), cudaMemcpyHostToDevice);
  const CUtensorMap m = map_of(x, rows);
  int wrong_runs = 0;
  for (int k = 0; k < times; ++k) {
    cudaMemset(y, 0, n * sizeof(float));
    kernel<<<1, 64>>>(m, y, rows);
    cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::printf("%s: %s\n", name, cudaGetErrorString(e));
      return;
    }
    cudaMemcpy(hy.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost);
    int wrong = 0;
    for (int i = 0; i < n; ++i) wrong += hy[i] != 2.0f * hx[i];
    wrong_runs += wrong != 0;
  }
  std::printf("%s (rows %d): %d of %d runs wrong\n", name, rows, wrong_runs, times);
  cudaFree(x);
  cudaFree(y);
}

}  // namespace

int main() {
  cudaDeviceProp p;
  cudaGetDeviceProperties(&p, 0);
  std::printf("device: %s\n", p.name);
  run("tma_scale", tma_scale, 32, 100);
  run("tma_scale", tma_scale, 64, 100);
  run("tma_scale_phase_no_mod2", tma_scale_phase_no_mod2, 64, 100);
  run("tma_scale_early_release", tma_scale_early_release, 32, 1000);
  return 0;
}
