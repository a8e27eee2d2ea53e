// __threadfence_block(), __threadfence() and __threadfence_system() (membar.cta,
// membar.gl, membar.sys) between a shared-memory write and another thread's
// read of it. See README.md for how the PTX is made.

// Each thread writes s[t] and reads s[t + 1], its neighbour's element. The
// fences come before a __syncthreads(), which is what orders the write and the
// read: ok.
extern "C" __global__ void threadfence_barrier(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  __threadfence_block();
  __threadfence();
  __threadfence_system();
  __syncthreads();
  y[t] = 2.0f * s[(t + 1) & 63];
}

// The same with the fences alone: a fence orders this thread's own accesses
// as other threads see them, but nothing makes the neighbour's read wait for
// the write, so the two race.
extern "C" __global__ void threadfence_only(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  __threadfence_block();
  __threadfence();
  __threadfence_system();
  y[t] = 2.0f * s[(t + 1) & 63];
}
