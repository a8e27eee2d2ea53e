// A two-stage producer/consumer pipeline written with CUTLASS's own mbarrier
// wrapper (cutlass/arch/barrier.h, ClusterBarrier), as CUTLASS kernels use it:
// warp 0 stages tiles of x in shared memory, warp 1 scales them into y.
// ClusterBarrier::wait is an inline-asm block that declares the labels
// LAB_WAIT and DONE and a predicate P1; nvcc inlines one copy per call site,
// so the PTX holds several blocks with the same labels (PTX block scoping).
//   nvcc -std=c++17 -O3 -arch=sm_90a -ptx -I<cutlass>/include pipeline.cu -o pipeline.ptx
// (CUTLASS at commit 7107b0553, headers only.)
#include <cutlass/arch/barrier.h>

constexpr int kTile = 32, kStages = 2, kTiles = 8;

template <bool Broken>
__device__ void pipeline(const float* x, float* y) {
  using Barrier = cutlass::arch::ClusterBarrier;
  __shared__ alignas(16) float stage[kStages][kTile];
  __shared__ Barrier::ValueType full[kStages], empty[kStages];  // CUTLASS pipelines keep raw uint64_t barriers
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      Barrier::init(&full[s], 32);   // the producer warp's lanes
      Barrier::init(&empty[s], 32);  // the consumer warp's lanes
    }
    cutlass::arch::fence_barrier_init();
  }
  __syncthreads();
  if (warp == 0) {
    for (int t = 0; t < kTiles; ++t) {
      const int s = t % kStages, round = t / kStages;
      Barrier::wait(&empty[s], (round & 1) ^ 1);  // a fresh barrier passes parity 1 at once
      stage[s][lane] = x[t * kTile + lane];
      Barrier::arrive(&full[s]);
    }
  } else {
    for (int t = 0; t < kTiles; ++t) {
      const int s = t % kStages, round = t / kStages;
      if (!Broken) Barrier::wait(&full[s], round & 1);
      y[t * kTile + lane] = 2.0f * stage[s][lane];
      Barrier::arrive(&empty[s]);
    }
  }
}

extern "C" __global__ void pipeline_ok(const float* x, float* y) { pipeline<false>(x, y); }
// Broken: the consumer reads a stage without waiting for the producer.
extern "C" __global__ void pipeline_nowait(const float* x, float* y) { pipeline<true>(x, y); }

extern "C" __global__ void scale_ref(const float* x, float* y) {
  for (int t = 0; t < kTiles; ++t) y[t * kTile + threadIdx.x] = 2.0f * x[t * kTile + threadIdx.x];
}
