// The sm_90 fences: proxy fences (fence.proxy.async, .async.shared::cta,
// .async.global, .alias, the tensormap release), cluster-scope fences
// (fence.sc.cluster, fence.acq_rel.cluster) and fence.mbarrier_init, through
// inline asm and cuda::ptx. See README.md for how the PTX is made.
#include <cuda/ptx>

// Each thread writes s[t] and reads s[t + 1]; the __syncthreads() after the
// fences orders the neighbour's write before the read: ok.
extern "C" __global__ void proxy_fence_barrier(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  asm volatile("fence.proxy.async;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  cuda::ptx::fence_proxy_async(cuda::ptx::space_global);
  cuda::ptx::fence_proxy_alias();
  cuda::ptx::fence_proxy_tensormap_generic(cuda::ptx::sem_release, cuda::ptx::scope_gpu);
  cuda::ptx::fence(cuda::ptx::sem_sc, cuda::ptx::scope_cluster);
  cuda::ptx::fence(cuda::ptx::sem_acq_rel, cuda::ptx::scope_cluster);
  cuda::ptx::fence_mbarrier_init(cuda::ptx::sem_release, cuda::ptx::scope_cluster);
  __syncthreads();
  y[t] = 2.0f * s[(t + 1) & 63];
}

// A proxy fence orders this thread's generic accesses against the async
// proxy (TMA, bulk copies), not against other threads: the write and the
// neighbour's read race.
extern "C" __global__ void proxy_fence_only(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  y[t] = 2.0f * s[(t + 1) & 63];
}
