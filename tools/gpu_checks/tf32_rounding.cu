// What mma.sync .tf32 reads of a .b32 operand (sm_80 or newer). The PTX ISA
// ("Alternate Floating-Point Data Formats") leaves tf32's layout in a
// register implementation-defined; CUTLASS rounds f32 data for tf32 mma by
// adding 4096 to the bits (half a tf32 ulp) unless the value is infinite or
// NaN, and relies on the tensor cores dropping the low 13 bits, which
// src/ptx/lower_tf32.cpp reads as x rounded to tf32. For random A (16 x 8)
// and B (8 x 8), including exact ties, each trial runs one m16n8k8 .tf32 mma
// with the operands given as:
//   0: CUTLASS's rounding, 1: the same with the low 13 bits cleared,
//   2: cvt.rna.tf32.f32 (the ISA's round to nearest, ties away),
//   3: the raw f32 bits, 4: the raw bits with the low 13 bits cleared,
// and checks D0 == D1 == D2 and D3 == D4 bit for bit.
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_80 tf32_rounding.cu -o /tmp/t && /tmp/t
//
// Prints the mismatch counts and "ALL OK" (exit 0) or "FAILED" (exit 1).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace {

constexpr int kVariants = 5, kTrials = 4096;

__device__ std::uint32_t cutlass_round(std::uint32_t bits) {
  std::uint32_t y;
  asm("{ .reg .b32 a; .reg .f32 f, g; .reg .pred p;\n"
      "  add.s32 a, %1, 4096;\n  mov.b32 f, %1;\n  abs.f32 g, f;\n"
      "  setp.geu.f32 p, g, 0f7F800000;\n  selp.b32 %0, %1, a, p; }"
      : "=r"(y)
      : "r"(bits));
  return y;
}

__device__ std::uint32_t operand(std::uint32_t bits, int variant) {
  switch (variant) {
    case 0: return cutlass_round(bits);
    case 1: return cutlass_round(bits) & 0xffffe000u;
    case 2: {
      std::uint32_t y;
      asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(y) : "f"(__uint_as_float(bits)));
      return y;
    }
    case 3: return bits;
    default: return bits & 0xffffe000u;
  }
}

// One warp a trial; fragments of the PTX ISA's "Matrix Fragments for
// mma.m16n8k8" (.tf32): a_i at row g + 8 (i & 1), column t + 4 (i >> 1);
// b_i at row t + 4 i, column g; c_i at row g + 8 (i >> 1), column 2 t + (i & 1).
__global__ void probe(const std::uint32_t* A, const std::uint32_t* B, float* D) {
  const std::uint32_t* a = A + blockIdx.x * 128;
  const std::uint32_t* b = B + blockIdx.x * 64;
  const int g = threadIdx.x >> 2, t = threadIdx.x & 3;
  for (int v = 0; v < kVariants; ++v) {
    std::uint32_t ra[4], rb[2];
    for (int i = 0; i < 4; ++i) ra[i] = operand(a[(g + 8 * (i & 1)) * 8 + t + 4 * (i >> 1)], v);
    for (int i = 0; i < 2; ++i) rb[i] = operand(b[(t + 4 * i) * 8 + g], v);
    float d[4];
    asm volatile(
        "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%10,%10,%10};"
        : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
        : "r"(ra[0]), "r"(ra[1]), "r"(ra[2]), "r"(ra[3]), "r"(rb[0]), "r"(rb[1]), "f"(0.0f));
    for (int i = 0; i < 4; ++i)
      D[(std::size_t(blockIdx.x) * kVariants + v) * 128 + (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1)] = d[i];
  }
}

// Random floats of many magnitudes; a quarter are exact ties (low 13 bits 0x1000).
std::uint32_t random_bits(std::mt19937& rng) {
  const std::uint32_t sign = rng() & 0x80000000u, exponent = 127 - 20 + rng() % 40, mantissa = rng() & 0x7fffffu;
  std::uint32_t bits = sign | exponent << 23 | mantissa;
  if (rng() % 4 == 0) bits = (bits & ~0x1fffu) | 0x1000u;
  return bits;
}

}  // namespace

int main() {
  std::mt19937 rng(11);
  std::vector<std::uint32_t> a(std::size_t(kTrials) * 128), b(std::size_t(kTrials) * 64);
  for (auto& x : a) x = random_bits(rng);
  for (auto& x : b) x = random_bits(rng);
  std::uint32_t *da, *db;
  float* dd;
  const std::size_t nd = std::size_t(kTrials) * kVariants * 128;
  cudaMalloc(&da, a.size() * 4);
  cudaMalloc(&db, b.size() * 4);
  cudaMalloc(&dd, nd * 4);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  probe<<<kTrials, 32>>>(da, db, dd);
  std::vector<float> d(nd);
  if (cudaMemcpy(d.data(), dd, nd * 4, cudaMemcpyDeviceToHost) != cudaSuccess) {
    std::printf("CUDA error: %s\nFAILED\n", cudaGetErrorString(cudaGetLastError()));
    return 1;
  }
  auto bits_at = [&](int trial, int v, int e) {
    std::uint32_t x;
    std::memcpy(&x, &d[(std::size_t(trial) * kVariants + v) * 128 + e], 4);
    return x;
  };
  const int pairs[][2] = {{0, 1}, {0, 2}, {3, 4}};
  long mismatches[3] = {0, 0, 0};
  for (int trial = 0; trial < kTrials; ++trial)
    for (int e = 0; e < 128; ++e)
      for (int p = 0; p < 3; ++p) mismatches[p] += bits_at(trial, pairs[p][0], e) != bits_at(trial, pairs[p][1], e);
  std::printf("%d trials of 128 outputs\n", kTrials);
  std::printf("CUTLASS rounding vs the same truncated to tf32: %ld mismatches\n", mismatches[0]);
  std::printf("CUTLASS rounding vs cvt.rna.tf32.f32:           %ld mismatches\n", mismatches[1]);
  std::printf("raw f32 bits vs the same truncated to tf32:     %ld mismatches\n", mismatches[2]);
  const bool ok = mismatches[0] == 0 && mismatches[1] == 0 && mismatches[2] == 0;
  std::printf(ok ? "ALL OK\n" : "FAILED\n");
  return ok ? 0 : 1;
}
