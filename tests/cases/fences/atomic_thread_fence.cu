// cuda::atomic_thread_fence with memory_order_seq_cst and memory_order_acq_rel
// at thread_scope_block, thread_scope_device and thread_scope_system:
// fence.sc.{cta,gpu,sys} and fence.acq_rel.{cta,gpu,sys}. See README.md for
// how the PTX is made.
#include <cuda/atomic>

// Each thread writes s[t] and reads s[t + 1]; the __syncthreads() after the
// fences orders the neighbour's write before the read: ok.
extern "C" __global__ void thread_fence_barrier(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_block);
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_device);
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_system);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_block);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_device);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_system);
  __syncthreads();
  y[t] = 2.0f * s[(t + 1) & 63];
}

// A sequentially consistent fence alone, with no atomic flag to synchronize
// through: the write and the neighbour's read race.
extern "C" __global__ void seq_cst_fence_only(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  cuda::atomic_thread_fence(cuda::std::memory_order_seq_cst, cuda::thread_scope_device);
  y[t] = 2.0f * s[(t + 1) & 63];
}

// The same with an acquire-release fence at block scope.
extern "C" __global__ void acq_rel_fence_only(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_block);
  y[t] = 2.0f * s[(t + 1) & 63];
}
