// cuda::barrier + cuda::memcpy_async (libcu++): a CTA copies its tile of 256
// floats into shared memory and every thread combines two of its elements.
// nvcc 13 compiles the copy to a bulk copy (cp.async.bulk + mbarrier.expect_tx)
// for sm_90 and to cp.async + cp.async.mbarrier.arrive for sm_80; the wait
// to an mbarrier.try_wait / test_wait loop with a %globaltimer backoff.
#include <cooperative_groups.h>
#include <cuda/barrier>
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;
using barrier_t = cuda::barrier<cuda::thread_scope_block>;

constexpr int kTile = 256;

// The reference: each thread reads its two elements from global memory.
extern "C" __global__ void tile_ref(const float* __restrict__ x, float* __restrict__ y) {
  const float* tile = x + blockIdx.x * kTile;
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] * 2.0f + tile[kTile - 1 - t];
}

extern "C" __global__ void tile_barrier(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float tile[kTile];
  __shared__ barrier_t bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, x + blockIdx.x * kTile, cuda::aligned_size_t<16>(sizeof(float) * kTile), bar);
  bar.arrive_and_wait();
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] * 2.0f + tile[kTile - 1 - t];
}

// Bug: the tile is read between arrive() and wait(): before the copy is
// known to have landed.
extern "C" __global__ void tile_barrier_early(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float tile[kTile];
  __shared__ barrier_t bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size());
  block.sync();
  cuda::memcpy_async(block, tile, x + blockIdx.x * kTile, cuda::aligned_size_t<16>(sizeof(float) * kTile), bar);
  auto token = bar.arrive();
  int t = threadIdx.x;
  float v = tile[t] * 2.0f + tile[kTile - 1 - t];
  bar.wait(std::move(token));
  y[blockIdx.x * kTile + t] = v;
}

// Bug: the barrier expects one arrival more than the block makes.
extern "C" __global__ void tile_barrier_count(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float tile[kTile];
  __shared__ barrier_t bar;
  auto block = cg::this_thread_block();
  if (block.thread_rank() == 0) init(&bar, block.size() + 1);
  block.sync();
  cuda::memcpy_async(block, tile, x + blockIdx.x * kTile, cuda::aligned_size_t<16>(sizeof(float) * kTile), bar);
  bar.arrive_and_wait();
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] * 2.0f + tile[kTile - 1 - t];
}
