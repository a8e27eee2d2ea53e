// What a GPU does when a thread executes `brkpt` with no debugger attached.
// The PTX ISA (brkpt) says only "suspends execution"; CUTLASS puts one on
// its paths that must never run (CUTE_INVALID_CONTROL_PATH,
// cutlass::arch::device_breakpoint), so tileverify needs to know whether
// reaching one is a failed launch, a hang, or nothing.
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90a brkpt_check.cu -o /tmp/b && /tmp/b
//
// Runs the kernel once with the breakpoint not taken, then once with thread 0
// taking it, and prints what the launch returned (or that it still ran after
// 10 s) and whether the other threads' stores landed.
#include <chrono>
#include <cstdio>
#include <thread>

__global__ void brkpt_kernel(int take, int* out) {
  if (take && threadIdx.x == 0 && blockIdx.x == 0) asm volatile("brkpt;");
  out[blockIdx.x * blockDim.x + threadIdx.x] = 1;
}

static int run(int take) {
  const int n = 4 * 128;
  int* d = nullptr;
  if (cudaMalloc(&d, n * sizeof(int)) != cudaSuccess) return 1;
  cudaMemset(d, 0, n * sizeof(int));
  brkpt_kernel<<<4, 128>>>(take, d);
  const auto start = std::chrono::steady_clock::now();
  cudaError_t e;
  while ((e = cudaStreamQuery(0)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() - start > std::chrono::seconds(10)) {
      std::printf("take=%d: still running after 10 s (the breakpoint suspends the thread)\n", take);
      return 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  int h[n] = {};
  const cudaError_t copy = cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost);
  int written = 0;
  for (int v : h) written += v;
  std::printf("take=%d: launch %s (%s); copy back %s; %d of %d stores landed\n", take, cudaGetErrorName(e),
              cudaGetErrorString(e), cudaGetErrorName(copy), copy == cudaSuccess ? written : -1, n);
  return 0;
}

int main() {
  run(0);
  run(1);  // last: a failed launch leaves the context unusable
  return 0;
}
