// What a GPU does with the synchronization patterns the CUDA guide leaves
// undefined or the PTX ISA only allows from sm_70 on, next to tileverify's
// verdicts on the same kernels (docs/evaluator.md, "Synchronization").
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90 -lineinfo sync_rules.cu -o /tmp/s && /tmp/s
//   compute-sanitizer --tool racecheck /tmp/s; compute-sanitizer --tool synccheck /tmp/s
//
// Each kernel exchanges values through shared memory after its sync, so a
// sync that did not order the writes before the reads would show as wrong
// values (or as a racecheck hazard). The program prints, per kernel, whether
// every output had the value a real barrier gives, and exits 0 when the
// launches themselves succeeded (wrong values are a finding, not a failure).
//
//  mismatched_masks: lanes 0-15 __syncwarp(0x0000ffff), lanes 16-31
//    __syncwarp(0xffffffff). CUDA guide (warp synchronization functions):
//    every non-exited thread named in a mask must execute a corresponding
//    __syncwarp() with the same mask, else the behaviour is undefined.
//  two_call_sites: lanes 0-15 and 16-31 reach __syncwarp() (full mask) at two
//    different instructions; PTX ISA bar.warp.sync requires the same
//    instruction only for .target sm_6x and below.
//  divergent_barrier: odd threads return before __syncthreads(), which the
//    guide allows in conditional code only when the condition is the same
//    for the whole block.
//  different_barriers: two warps of a block reach __syncthreads() at two
//    different instructions (undefined in the guide; shows what the GPU did).
#include <cstdio>
#include <vector>

#define CK(x)                                                                        \
  do {                                                                               \
    cudaError_t e_ = (x);                                                            \
    if (e_ != cudaSuccess) {                                                         \
      std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__);  \
      return false;                                                                  \
    }                                                                                \
  } while (0)

__global__ void mismatched_masks(const float* x, float* y) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x;
  s[lane] = x[lane];
  if (lane < 16)
    __syncwarp(0x0000ffffu);
  else
    __syncwarp(0xffffffffu);
  y[lane] = s[31 - lane];
}

__global__ void two_call_sites(const float* x, float* y) {
  __shared__ float s[32];
  unsigned lane = threadIdx.x;
  if (lane < 16) {
    s[lane] = x[lane] * 2.0f;
    __syncwarp();
  } else {
    s[lane] = x[lane] + 1.0f;
    __syncwarp();
  }
  y[lane] = s[31 - lane];
}

__global__ void divergent_barrier(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  if (t % 2 == 1) return;
  s[t] = x[t];
  __syncthreads();
  y[t] = s[(t + 2) % 64];
}

__global__ void different_barriers(const float* x, float* y) {
  __shared__ float s[64];
  unsigned t = threadIdx.x;
  s[t] = x[t];
  if (t < 32)
    __syncthreads();
  else
    __syncthreads();
  y[t] = s[63 - t];
}

namespace {

using Kernel = void (*)(const float*, float*);

// Runs k on one CTA of n threads with x[i] = i + 1 and compares y with want.
bool run(const char* name, Kernel k, unsigned n, const std::vector<float>& want, const std::vector<bool>& written) {
  std::vector<float> x(n), y(n, -1.0f);
  for (unsigned i = 0; i < n; ++i) x[i] = float(i + 1);
  float *dx = nullptr, *dy = nullptr;
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dy, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  for (int rep = 0; rep < 1000; ++rep) k<<<1, n>>>(dx, dy);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(y.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  CK(cudaFree(dx));
  CK(cudaFree(dy));
  unsigned bad = 0;
  for (unsigned i = 0; i < n; ++i)
    if (written[i] && y[i] != want[i]) {
      if (bad < 4) std::printf("  %s: y[%u] = %g, a barrier gives %g\n", name, i, y[i], want[i]);
      ++bad;
    }
  std::printf("%-20s launch ok, %s (1000 launches)\n", name,
              bad ? "SOME VALUES differ from what a barrier gives" : "every value as a barrier gives");
  return true;
}

}  // namespace

int main() {
  bool ok = true;
  {
    std::vector<float> want(32);
    for (unsigned l = 0; l < 32; ++l) want[l] = float(31 - l + 1);
    ok = run("mismatched_masks", mismatched_masks, 32, want, std::vector<bool>(32, true)) && ok;
  }
  {
    std::vector<float> want(32);
    for (unsigned l = 0; l < 32; ++l) {
      unsigned src = 31 - l;
      want[l] = src < 16 ? float(src + 1) * 2.0f : float(src + 1) + 1.0f;
    }
    ok = run("two_call_sites", two_call_sites, 32, want, std::vector<bool>(32, true)) && ok;
  }
  {
    std::vector<float> want(64);
    std::vector<bool> written(64);
    for (unsigned t = 0; t < 64; ++t) {
      written[t] = t % 2 == 0;
      want[t] = float((t + 2) % 64 + 1);
    }
    ok = run("divergent_barrier", divergent_barrier, 64, want, written) && ok;
  }
  {
    std::vector<float> want(64);
    for (unsigned t = 0; t < 64; ++t) want[t] = float(63 - t + 1);
    ok = run("different_barriers", different_barriers, 64, want, std::vector<bool>(64, true)) && ok;
  }
  return ok ? 0 : 1;
}
