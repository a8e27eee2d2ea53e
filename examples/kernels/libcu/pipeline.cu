// cuda::pipeline (libcu++) with a block-scoped cuda::pipeline_shared_state:
// a two-stage producer/consumer loop over four tiles of 128 floats; each
// thread sums its column, weighting tile k by k + 1.
#include <cooperative_groups.h>
#include <cuda/pipeline>
#include <new>
#pragma nv_diag_suppress static_var_with_dynamic_init

namespace cg = cooperative_groups;

constexpr int kT = 128, kStages = 2, kTiles = 4;

extern "C" __global__ void pipe_ref(const float* __restrict__ x, float* __restrict__ y) {
  int t = threadIdx.x;
  float acc = 0.f;
  for (int k = 0; k < kTiles; ++k) acc += x[k * kT + t] * (k + 1);
  y[t] = acc;
}

extern "C" __global__ void pipe_sum(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float buf[kStages][kT];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  auto block = cg::this_thread_block();
  auto pipe = cuda::make_pipeline(block, &state);
  float acc = 0.f;
  int t = threadIdx.x;
  for (int fetch = 0, use = 0; use < kTiles; ++use) {
    for (; fetch < kTiles && fetch < use + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % kStages], x + fetch * kT, cuda::aligned_size_t<16>(sizeof(float) * kT), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += buf[use % kStages][t] * (use + 1);
    pipe.consumer_release();
  }
  y[t] = acc;
}

// The same loop with a thread-scoped pipeline (cuda::make_pipeline()): each
// thread copies its own elements; nvcc 13 compiles it to cp.async,
// cp.async.commit_group and cp.async.wait_group.
extern "C" __global__ void pipe_thread(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float buf[kStages][kT];
  auto pipe = cuda::make_pipeline();
  float acc = 0.f;
  int t = threadIdx.x;
  for (int fetch = 0, use = 0; use < kTiles; ++use) {
    for (; fetch < kTiles && fetch < use + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[fetch % kStages][t], x + fetch * kT + t, sizeof(float), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    acc += buf[use % kStages][t] * (use + 1);
    pipe.consumer_release();
  }
  y[t] = acc;
}

// Bug: the stage is read before consumer_wait(): its copy may be in flight.
extern "C" __global__ void pipe_thread_early(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float buf[kStages][kT];
  auto pipe = cuda::make_pipeline();
  float acc = 0.f;
  int t = threadIdx.x;
  for (int fetch = 0, use = 0; use < kTiles; ++use) {
    for (; fetch < kTiles && fetch < use + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(&buf[fetch % kStages][t], x + fetch * kT + t, sizeof(float), pipe);
      pipe.producer_commit();
    }
    float v = buf[use % kStages][t];
    pipe.consumer_wait();
    acc += v * (use + 1);
    pipe.consumer_release();
  }
  y[t] = acc;
}

// pipe_sum with the pipeline object built in place and never destroyed: the
// same producer/consumer loop without pipeline::quit, whose election of the
// thread that invalidates the barriers (activemask, match.any.sync and an
// atomic's returned count) is outside what tileverify verifies.
using block_pipeline = cuda::pipeline<cuda::thread_scope_block>;

template <bool kEarlyRelease>
__device__ void pipe_loop(block_pipeline& pipe, const float* __restrict__ x, float* __restrict__ y,
                          float (&buf)[kStages][kT]) {
  auto block = cg::this_thread_block();
  float acc = 0.f;
  int t = threadIdx.x;
  for (int fetch = 0, use = 0; use < kTiles; ++use) {
    for (; fetch < kTiles && fetch < use + kStages; ++fetch) {
      pipe.producer_acquire();
      cuda::memcpy_async(block, buf[fetch % kStages], x + fetch * kT, cuda::aligned_size_t<16>(sizeof(float) * kT), pipe);
      pipe.producer_commit();
    }
    pipe.consumer_wait();
    if (kEarlyRelease) pipe.consumer_release();
    acc += buf[use % kStages][t] * (use + 1);
    if (!kEarlyRelease) pipe.consumer_release();
  }
  y[t] = acc;
}

extern "C" __global__ void pipe_sum_kept(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float buf[kStages][kT];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  alignas(block_pipeline) unsigned char storage[sizeof(block_pipeline)];
  auto* pipe = new (storage) auto(cuda::make_pipeline(cg::this_thread_block(), &state));
  pipe_loop<false>(*pipe, x, y, buf);
}

// Bug: consumer_release() before the stage is read.
extern "C" __global__ void pipe_kept_early_release(const float* __restrict__ x, float* __restrict__ y) {
  __shared__ alignas(16) float buf[kStages][kT];
  __shared__ cuda::pipeline_shared_state<cuda::thread_scope_block, kStages> state;
  alignas(block_pipeline) unsigned char storage[sizeof(block_pipeline)];
  auto* pipe = new (storage) auto(cuda::make_pipeline(cg::this_thread_block(), &state));
  pipe_loop<true>(*pipe, x, y, buf);
}
