// The forms cuda::atomic_ref (libcu++, <cuda/atomic>) compiles to with
// nvcc 13: atom.add.relaxed.cta.f32 and the like (inline assembly, with the
// operation before the memory order), fetch_max on a float as a CAS loop
// that starts with ld.relaxed, compare_exchange_weak loops, ld.acquire /
// st.release, and fence.acq_rel. Memory orders change nothing in
// tileverify's model (barriers order accesses, docs/evaluator.md, "Fences");
// the kernels are verified against serial references. PTX: tools/regen_ptx.sh.
#include <cuda/atomic>

#define N 64  // threads of the atomic kernels

using relaxed_t = cuda::std::memory_order;

// y[0]: the sum of x; y[1]: the maximum; y[2]: the minimum (by a
// compare_exchange_weak loop); y[3]: how many threads (an integer fetch_add).
extern "C" __global__ void stats_atomic_ref(const float* x, float* y) {
  __shared__ float sum, top, low;
  __shared__ int count;
  int t = threadIdx.x;
  cuda::atomic_ref<float, cuda::thread_scope_block> rsum(sum), rtop(top), rlow(low);
  cuda::atomic_ref<int, cuda::thread_scope_block> rcount(count);
  if (t == 0) {
    rsum.store(0.0f, cuda::std::memory_order_relaxed);
    rtop.store(-INFINITY, cuda::std::memory_order_release);
    rlow.store(INFINITY, cuda::std::memory_order_relaxed);
    rcount.store(0, cuda::std::memory_order_relaxed);
  }
  __syncthreads();
  float v = x[t];
  rsum.fetch_add(v, cuda::std::memory_order_relaxed);
  rtop.fetch_max(v, cuda::std::memory_order_relaxed);
  float seen = rlow.load(cuda::std::memory_order_relaxed);
  while (!rlow.compare_exchange_weak(seen, fminf(seen, v), cuda::std::memory_order_acq_rel)) {
  }
  rcount.fetch_add(1, cuda::std::memory_order_relaxed);
  cuda::atomic_thread_fence(cuda::std::memory_order_acq_rel, cuda::thread_scope_block);
  __syncthreads();
  if (t == 0) {
    y[0] = rsum.load(cuda::std::memory_order_acquire);
    y[1] = rtop.load(cuda::std::memory_order_acquire);
    y[2] = rlow.load(cuda::std::memory_order_relaxed);
    y[3] = (float)rcount.load(cuda::std::memory_order_relaxed);
  }
}

extern "C" __global__ void stats_ref(const float* x, float* y) {
  if (threadIdx.x != 0) return;
  float s = 0.0f, hi = -INFINITY, lo = INFINITY;
  for (int i = 0; i < N; ++i) {
    s += x[i];
    hi = fmaxf(hi, x[i]);
    lo = fminf(lo, x[i]);
  }
  y[0] = s;
  y[1] = hi;
  y[2] = lo;
  y[3] = (float)N;
}

// Bug: thread 0 publishes the sum with a release store and the others read
// it with acquire loads, but nothing makes them wait for it: the memory
// orders do not order the threads (a barrier would), so this is a race.
extern "C" __global__ void publish_no_barrier(const float* x, float* y) {
  __shared__ float total;
  int t = threadIdx.x;
  cuda::atomic_ref<float, cuda::thread_scope_block> r(total);
  if (t == 0) {
    float s = 0.0f;
    for (int i = 0; i < N; ++i) s += x[i];
    r.store(s, cuda::std::memory_order_release);
  }
  float got = r.load(cuda::std::memory_order_acquire);
  if (t == 0) {
    y[0] = got;
    y[1] = got;
    y[2] = got;
    y[3] = got;
  }
}
