// Warp syncs and CTA barriers for the evaluator's synchronization rules
// (docs/evaluator.md, "Synchronization"); README.md says how the PTX is made
// and what each spec expects. Every kernel exchanges values through shared
// memory after its sync, so a sync that orders nothing shows as a race.

// Lanes 0-15 and 16-31 each synchronize with their own half-warp mask (one
// instruction, two masks) and read a neighbour of their half: ok.
extern "C" __global__ void matching_masks(const float* x, float* y) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x;
  s[lane] = x[lane];
  __syncwarp(lane < 16 ? 0x0000ffffu : 0xffff0000u);
  y[lane] = s[lane ^ 1];
}

// Lanes 0-15 synchronize with mask 0x0000ffff, lanes 16-31 with 0xffffffff,
// which names lanes 0-15: the masks of corresponding __syncwarp() calls
// differ (undefined in the CUDA guide), a deadlock.
extern "C" __global__ void mismatched_masks(const float* x, float* y) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x;
  s[lane] = x[lane];
  if (lane < 16)
    __syncwarp(0x0000ffffu);
  else
    __syncwarp(0xffffffffu);
  y[lane] = s[lane ^ 1];
}

// Both halves of the warp reach __syncwarp() (full mask) at two different
// instructions, then read the other half's values: a sync on sm_70 and
// later, a deadlock for .target sm_6x (PTX ISA, bar.warp.sync).
extern "C" __global__ void two_call_sites(const float* x, float* y) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x;
  if (lane < 16) {
    s[lane] = x[lane] * 2.0f;
    __syncwarp();
    y[lane] = s[31 - lane] + 1.0f;
  } else {
    s[lane] = x[lane] + 1.0f;
    __syncwarp();
    y[lane] = s[31 - lane] * 3.0f;
  }
}

// The odd threads return before __syncthreads(): barrier divergence, which
// sm_70+ GPUs tolerate (a warning; an error with "strict").
extern "C" __global__ void divergent_barrier(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  if (t % 2 == 1) return;
  s[t] = x[t];
  __syncthreads();
  y[t] = s[(t + 2) % 64];
}

// The two warps reach __syncthreads() at two different instructions: a
// deadlock (bar.sync is barrier.sync.aligned).
extern "C" __global__ void different_barriers(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  if (t < 32) {
    s[t] = x[t] * 2.0f;
    __syncthreads();
    y[t] = s[63 - t] + 1.0f;
  } else {
    s[t] = x[t] + 1.0f;
    __syncthreads();
    y[t] = s[63 - t] * 3.0f;
  }
}
