// What the GPU checks of tools/gpu_checks share: CUDA error checks, the
// MISMATCH report (the first 40 printed, all counted) and a fixed-seed
// random generator, so a failing run repeats exactly.
#pragma once

#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t e_ = (x);                                                          \
    if (e_ != cudaSuccess) {                                                       \
      std::printf("CUDA error %s at line %d\n", cudaGetErrorString(e_), __LINE__); \
      std::exit(2);                                                                \
    }                                                                              \
  } while (0)

static long g_mismatch = 0;
static void mismatch(const char* fmt, ...) {
  if (g_mismatch < 40) {
    std::va_list ap;
    va_start(ap, fmt);
    std::printf("MISMATCH ");
    std::vprintf(fmt, ap);
    std::printf("\n");
    va_end(ap);
  }
  ++g_mismatch;
}

static uint32_t g_rng = 12345u;
static uint32_t rnd() {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 17;
  g_rng ^= g_rng << 5;
  return g_rng;
}
