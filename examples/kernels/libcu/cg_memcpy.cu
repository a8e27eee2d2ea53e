// cooperative_groups::memcpy_async + cooperative_groups::wait: nvcc 13
// compiles them to cp.async, cp.async.commit_group, cp.async.wait_group 0
// and a block barrier.
#include <cooperative_groups.h>
#include <cooperative_groups/memcpy_async.h>

namespace cg = cooperative_groups;

constexpr int kTile = 256;

extern "C" __global__ void cg_ref(const float* __restrict__ x, float* __restrict__ y) {
  const float* tile = x + blockIdx.x * kTile;
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] + tile[(t + 1) % kTile];
}

extern "C" __global__ void cg_copy(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float tile[kTile];
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, tile, x + blockIdx.x * kTile, sizeof(float) * kTile);
  cg::wait(block);
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] + tile[(t + 1) % kTile];
}

// Bug: no cg::wait: the tile is read while the copies may be in flight.
extern "C" __global__ void cg_nowait(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float tile[kTile];
  auto block = cg::this_thread_block();
  cg::memcpy_async(block, tile, x + blockIdx.x * kTile, sizeof(float) * kTile);
  block.sync();
  int t = threadIdx.x;
  y[blockIdx.x * kTile + t] = tile[t] + tile[(t + 1) % kTile];
}
