// What a GPU does when the arrivals on an mbarrier overshoot the pending
// count of its current phase. The PTX ISA (mbarrier: "Phase completion",
// mbarrier.arrive) defines an arrive-on operation as decrementing the pending
// arrival count by its count (1 by default) and the phase as complete when
// the count reaches zero; it does not say what an arrive larger than the
// pending count does. This program measures it: every thread of each of 8
// CTAs arrives on its CTA's barrier, initialised for C arrivals, and nobody
// waits (so a count that never completes a phase cannot hang the launch).
//
//   nvcc -std=c++17 -arch=sm_90 mbarrier_overshoot.cu -o /tmp/mo
//   /tmp/mo THREADS COUNT MODE [ARG]
//     MODE converged: every thread arrives at one instruction, the warp converged
//          serial:    the lanes of each warp arrive one at a time (a loop over
//                     lanes with __syncwarp() between them)
//          partial P: only lanes < P of each warp arrive (converged)
//          count K:   every thread arrives with count K (converged)
//          single K:  only thread 0 of the CTA arrives, with count K
//
// A fault kills the CUDA context, so each configuration is one process;
// mbarrier_overshoot.sh runs the table. The program prints the launch's
// status and, per CTA, test_wait.parity 0 and 1 ("10": one phase completed;
// "01": none, or two).
#include <cstdio>
#include <cstdlib>
#include <cstring>

enum Mode { Converged, Serial, Partial, Count, Single };

__device__ __forceinline__ void arrive(unsigned bar, unsigned count) {
  if (count == 1)
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
  else
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ bool phase_done(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{ .reg .pred p; mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2; selp.u32 %0, 1, 0, p; }"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__global__ void overshoot(unsigned expected, int mode, unsigned arg, int* phases) {
  __shared__ alignas(8) unsigned long long mbar;
  const unsigned bar = unsigned(__cvta_generic_to_shared(&mbar));
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(expected) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  switch (mode) {
    case Converged: arrive(bar, 1); break;
    case Serial:
      for (unsigned l = 0; l < 32; ++l) {
        if (l == lane) arrive(bar, 1);
        __syncwarp();
      }
      break;
    case Partial:
      if (lane < arg) arrive(bar, 1);
      break;
    case Count: arrive(bar, arg); break;
    case Single:
      if (threadIdx.x == 0) arrive(bar, arg);
      break;
  }
  __syncthreads();
  // test_wait.parity(0) is true after one completed phase, test_wait.parity(1)
  // before any or after two: two bits, "10" = exactly one phase completed.
  if (threadIdx.x == 0) phases[blockIdx.x] = 2 * int(phase_done(bar, 0)) + int(phase_done(bar, 1));
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s THREADS COUNT converged|serial|partial P|count K\n", argv[0]);
    return 2;
  }
  const int threads = std::atoi(argv[1]);
  const unsigned expected = unsigned(std::atoi(argv[2]));
  const char* m = argv[3];
  const int mode = !std::strcmp(m, "serial") ? Serial : !std::strcmp(m, "partial") ? Partial
                   : !std::strcmp(m, "count")  ? Count  : !std::strcmp(m, "single") ? Single : Converged;
  const unsigned arg = argc > 4 ? unsigned(std::atoi(argv[4])) : 1;
  int* phases;
  cudaMalloc(&phases, 8 * sizeof(int));
  cudaMemset(phases, 0xff, 8 * sizeof(int));
  overshoot<<<8, threads>>>(expected, mode, arg, phases);
  const cudaError_t e = cudaDeviceSynchronize();
  int host[8] = {};
  if (e == cudaSuccess) cudaMemcpy(host, phases, sizeof host, cudaMemcpyDeviceToHost);
  std::printf("threads %3d count %3u %-9s %-3s: %s", threads, expected, m, argc > 4 ? argv[4] : "",
              e == cudaSuccess ? "ok" : cudaGetErrorString(e));
  if (e == cudaSuccess) {
    std::printf("; test_wait.parity(0),(1) per CTA:");
    for (int v : host) std::printf(" %d%d", (v >> 1) & 1, v & 1);
  }
  std::printf("\n");
  return e == cudaSuccess ? 0 : 1;
}
