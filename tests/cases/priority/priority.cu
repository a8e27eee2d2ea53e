// Verdict priority: a bug a run finds before it reaches an instruction
// tileverify does not support is the verdict, not "unsupported".
// UNSUPPORTED() (PTX pmevent, a performance-monitor event, which tileverify
// does not model) stands for any such instruction.
#define UNSUPPORTED() asm volatile("pmevent 1;")

// Reads shared memory nothing wrote, then reaches it: uninitialized.
extern "C" __global__ void uninit_then_unsupported(float* y) {
  __shared__ float s[32];
  y[threadIdx.x] = s[threadIdx.x];
  UNSUPPORTED();
}

// Every thread writes its own value to s[0] with nothing ordering them: a
// race, found before it.
extern "C" __global__ void race_then_unsupported(const float* x, float* y) {
  __shared__ float s[1];
  s[0] = x[threadIdx.x];
  __syncthreads();
  y[threadIdx.x] = s[0];
  UNSUPPORTED();
}

// The instruction on a path no thread takes for this launch (n = 32 threads, the
// branch needs threadIdx.x >= 64): the kernel is checked as if it were not there.
extern "C" __global__ void unsupported_not_reached(const float* x, float* y) {
  if (threadIdx.x >= 64) UNSUPPORTED();
  y[threadIdx.x] = x[threadIdx.x] * 2.0f;
}

// Reached by every thread: unsupported.
extern "C" __global__ void unsupported_reached(const float* x, float* y) {
  y[threadIdx.x] = x[threadIdx.x] * 2.0f;
  UNSUPPORTED();
}

// The reference for the pairs: y = 2x.
extern "C" __global__ void twice(const float* x, float* y) { y[threadIdx.x] = 2.0f * x[threadIdx.x]; }
