// Kernels for tests/ptx/mma_f16acc_test.cpp; mma_f16acc.ptx is
// nvcc -arch=sm_80 -O3 -ptx mma_f16acc.cu (CUDA 13.0).
// mma.sync with .f16 accumulators (C and D as two .f16x2 registers), as
// CuTe's SM80_16x8x16_F16F16F16F16_TN and CUTLASS's f16 GEMMs emit it, and the
// mixed forms (.f32 D from an .f16 C, and the reverse). One warp computes
// D = A B + C for A 16 x K row-major, B K x 8 row-major, C and D 16 x 8.
#include <cuda_fp16.h>
#include <cstdint>

namespace {

__device__ uint32_t pack(__half lo, __half hi) {
  __half2 h = __halves2half2(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
__device__ __half low(uint32_t r) { return __low2half(*reinterpret_cast<__half2*>(&r)); }
__device__ __half high(uint32_t r) { return __high2half(*reinterpret_cast<__half2*>(&r)); }

// The fragment layouts of the PTX ISA, "Matrix Fragments for mma.m16n8k16 with
// floating point type" (m16n8k8: the first half of each): lane = 4 g + t.
template <int K>
__device__ void load_ab(const __half* A, const __half* B, uint32_t* a, uint32_t* b) {
  int g = threadIdx.x >> 2, t = threadIdx.x & 3;
  for (int r = 0; r < K / 4; ++r) {  // a_{2r}, a_{2r+1}: row g (+8 for odd r), columns 2t, 2t+1 (+8 for r >= 2)
    int row = g + 8 * (r & 1), col = 2 * t + 8 * (r >> 1);
    a[r] = pack(A[row * K + col], A[row * K + col + 1]);
  }
  for (int r = 0; r < K / 8; ++r) {  // b_{2r}, b_{2r+1}: rows 2t, 2t+1 (+8 for r = 1), column g
    int k = 2 * t + 8 * r;
    b[r] = pack(B[k * 8 + g], B[(k + 1) * 8 + g]);
  }
}
__device__ int c_index(int i) {  // c_i: row g (+8 for i >= 2), column 2t + (i & 1)
  int g = threadIdx.x >> 2, t = threadIdx.x & 3;
  return (g + 8 * (i >> 1)) * 8 + 2 * t + (i & 1);
}

}  // namespace

extern "C" __global__ void mma_k16_f16(const __half* A, const __half* B, const __half* C, __half* D) {
  uint32_t a[4], b[2], c[2], d[2];
  load_ab<16>(A, B, a, b);
  c[0] = pack(C[c_index(0)], C[c_index(1)]);
  c[1] = pack(C[c_index(2)], C[c_index(3)]);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  D[c_index(0)] = low(d[0]);
  D[c_index(1)] = high(d[0]);
  D[c_index(2)] = low(d[1]);
  D[c_index(3)] = high(d[1]);
}

// The bug a wrong layout would hide: the two halves of d0 stored swapped.
extern "C" __global__ void mma_k16_f16_swapped(const __half* A, const __half* B, const __half* C, __half* D) {
  uint32_t a[4], b[2], c[2], d[2];
  load_ab<16>(A, B, a, b);
  c[0] = pack(C[c_index(0)], C[c_index(1)]);
  c[1] = pack(C[c_index(2)], C[c_index(3)]);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  D[c_index(0)] = high(d[0]);
  D[c_index(1)] = low(d[0]);
  D[c_index(2)] = low(d[1]);
  D[c_index(3)] = high(d[1]);
}

extern "C" __global__ void mma_k8_f16(const __half* A, const __half* B, const __half* C, __half* D) {
  uint32_t a[2], b[1], c[2], d[2];
  load_ab<8>(A, B, a, b);
  c[0] = pack(C[c_index(0)], C[c_index(1)]);
  c[1] = pack(C[c_index(2)], C[c_index(3)]);
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3}, {%4}, {%5,%6};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(b[0]), "r"(c[0]), "r"(c[1]));
  D[c_index(0)] = low(d[0]);
  D[c_index(1)] = high(d[0]);
  D[c_index(2)] = low(d[1]);
  D[c_index(3)] = high(d[1]);
}

// .f32 D from an .f16 C.
extern "C" __global__ void mma_k16_f32_from_f16(const __half* A, const __half* B, const __half* C, __half* D) {
  uint32_t a[4], b[2], c[2];
  float d[4];
  load_ab<16>(A, B, a, b);
  c[0] = pack(C[c_index(0)], C[c_index(1)]);
  c[1] = pack(C[c_index(2)], C[c_index(3)]);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%10,%11};"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(c[0]), "r"(c[1]));
  for (int i = 0; i < 4; ++i) D[c_index(i)] = __float2half(d[i]);
}

// .f16 D from an .f32 C.
extern "C" __global__ void mma_k16_f16_from_f32(const __half* A, const __half* B, const __half* C, __half* D) {
  uint32_t a[4], b[2], d[2];
  float c[4];
  load_ab<16>(A, B, a, b);
  for (int i = 0; i < 4; ++i) c[i] = __half2float(C[c_index(i)]);
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f32 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, {%8,%9,%10,%11};"
               : "=r"(d[0]), "=r"(d[1])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "f"(c[0]), "f"(c[1]),
                 "f"(c[2]), "f"(c[3]));
  D[c_index(0)] = low(d[0]);
  D[c_index(1)] = high(d[0]);
  D[c_index(2)] = low(d[1]);
  D[c_index(3)] = high(d[1]);
}

// The naive product, one thread per element of D (16 x 8), for K = 16 or 8.
extern "C" __global__ void naive(const __half* A, const __half* B, const __half* C, __half* D, int K) {
  int r = threadIdx.x / 8, n = threadIdx.x % 8;
  float acc = __half2float(C[r * 8 + n]);
  for (int k = 0; k < K; ++k) acc += __half2float(A[r * K + k]) * __half2float(B[k * 8 + n]);
  D[r * 8 + n] = __float2half(acc);
}
