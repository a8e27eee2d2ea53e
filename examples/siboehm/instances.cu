// Instantiates Simon Boehm's SGEMM kernels (github.com/siboehm/SGEMM_CUDA,
// src/kernels, unedited) with the parameters src/runner.cu launches them with
// for M, N >= 128, included in the order of src/kernels.cuh
// (kernel 12 uses kernel 10's WARPSIZE).
#include "1_naive.cuh"
#include "5_kernel_2D_blocktiling.cuh"
#include "6_kernel_vectorize.cuh"
#include "10_kernel_warptiling.cuh"
#include "11_kernel_double_buffering.cuh"
#include "12_kernel_double_buffering.cuh"

template __global__ void sgemm2DBlocktiling<128, 128, 8, 8, 8>(int, int, int, float, const float *, const float *,
                                                               float, float *);
template __global__ void sgemmVectorize<128, 128, 8, 8, 8>(int, int, int, float, float *, float *, float, float *);
template __global__ void sgemmWarptiling<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *, float *,
                                                                             float, float *);
template __global__ void sgemmDoubleBuffering<128, 256, 16, 128, 32, 1, 8, 8, 256>(const int, const int, const int,
                                                                                  const float, float *, float *, float,
                                                                                  float *);
template __global__ void runSgemmDoubleBuffering2<128, 128, 16, 64, 64, 4, 8, 4, 128>(int, int, int, float, float *,
                                                                                     float *, float, float *);
