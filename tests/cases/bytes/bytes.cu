// Memory is bytes: kernels that store data at one width and read it at
// another (README.md lists the specs and the command that made bytes.ptx).
#include <cuda_fp16.h>
#include <cstdint>

// The reference for the f16 copies: y[t] = x[t].
extern "C" __global__ void copy_ref(const __half* x, __half* y) { y[threadIdx.x] = x[threadIdx.x]; }

// Dynamic shared memory written as 32-bit words (two halves each), read as
// halves: a 2-byte read of 4-byte stores.
extern "C" __global__ void words_then_halves(const __half* x, __half* y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = threadIdx.x;
  if (t < blockDim.x / 2) reinterpret_cast<uint32_t*>(smem)[t] = reinterpret_cast<const uint32_t*>(x)[t];
  __syncthreads();
  y[t] = reinterpret_cast<const __half*>(smem)[t];
}

// The same through 16-byte vectors (uint4: eight halves), as tiled kernels
// copy tiles.
extern "C" __global__ void uint4_then_halves(const __half* x, __half* y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = threadIdx.x;
  if (t < blockDim.x / 8) reinterpret_cast<uint4*>(smem)[t] = reinterpret_cast<const uint4*>(x)[t];
  __syncthreads();
  y[t] = reinterpret_cast<const __half*>(smem)[t];
}

// __half2 stores read back as __halfs.
extern "C" __global__ void half2_then_halves(const __half* x, __half* y) {
  __shared__ __half2 s[32];
  const int t = threadIdx.x;
  if (t < 32) s[t] = reinterpret_cast<const __half2*>(x)[t];
  __syncthreads();
  y[t] = reinterpret_cast<const __half*>(s)[t];
}

// ldmatrix over a tile stored as 16-byte words: lane l gives the address of
// row l (matrix l / 8, row l % 8) and receives in register q the elements
// (l / 4, 2 (l % 4)) and (l / 4, 2 (l % 4) + 1) of matrix q.
extern "C" __global__ void ldmatrix_rows(const __half* x, __half* y) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int l = threadIdx.x;
  reinterpret_cast<uint4*>(smem)[l] = reinterpret_cast<const uint4*>(x)[l];
  __syncthreads();
  unsigned r0, r1, r2, r3;
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + 16 * l));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
  unsigned* out = reinterpret_cast<unsigned*>(y) + 4 * l;
  out[0] = r0;
  out[1] = r1;
  out[2] = r2;
  out[3] = r3;
}

// What ldmatrix_rows computes, one element per thread (256 threads).
extern "C" __global__ void ldmatrix_ref(const __half* x, __half* y) {
  const int e = threadIdx.x, l = e / 8, q = (e % 8) / 2, i = e % 2;
  y[e] = x[8 * (8 * q + l / 4) + 2 * (l % 4) + i];
}

// Two floats packed into halves (cvt.rn.f16x2.f32), stored as one 32-bit
// word, read back as 16-bit halves.
extern "C" __global__ void pack_ref(const float* x, float* y) { y[threadIdx.x] = x[threadIdx.x]; }
extern "C" __global__ void pack_then_halves(const float* x, float* y) {
  __shared__ unsigned s[32];
  const int t = threadIdx.x;
  if (t < 32) {
    __half2 h = __floats2half2_rn(x[2 * t], x[2 * t + 1]);
    s[t] = *reinterpret_cast<unsigned*>(&h);
  }
  __syncthreads();
  y[t] = __half2float(reinterpret_cast<const __half*>(s)[t]);
}

// A float2 (8 bytes) stored, read back as floats.
extern "C" __global__ void float2_then_floats(const float* x, float* y) {
  __shared__ float2 s[32];
  const int t = threadIdx.x;
  if (t < 32) s[t] = make_float2(x[2 * t], x[2 * t + 1]);
  __syncthreads();
  y[t] = reinterpret_cast<const float*>(s)[t];
}

// A 64-bit integer stored, read back as two 32-bit words: y[2t] = 5t + 2
// (the low word), y[2t + 1] = 3t + 1.
extern "C" __global__ void words_ref(unsigned* y) {
  const unsigned t = threadIdx.x;
  y[2 * t] = 5 * t + 2;
  y[2 * t + 1] = 3 * t + 1;
}
extern "C" __global__ void u64_then_words(unsigned* y) {
  __shared__ unsigned long long s[32];
  const unsigned t = threadIdx.x;
  s[t] = (static_cast<unsigned long long>(3 * t + 1) << 32) | (5 * t + 2);
  __syncthreads();
  const unsigned* w = reinterpret_cast<const unsigned*>(s);
  y[2 * t] = w[2 * t];
  y[2 * t + 1] = w[2 * t + 1];
}

// A float read as its upper half: a 4-byte float has no 2-byte parts.
extern "C" __global__ void float_then_half(const float* x, float* y) {
  __shared__ float s[32];
  const int t = threadIdx.x;
  s[t] = x[t];
  __syncthreads();
  y[t] = __half2float(reinterpret_cast<const __half*>(s)[2 * t + 1]);
}

// Thread 0 writes a 32-bit word and thread 1 reads its upper half without
// a barrier: a race (half = 1); the lower half of the next word: none (half = 2).
extern "C" __global__ void word_and_half(const __half* x, __half* y, int half) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = threadIdx.x;
  if (t == 0) reinterpret_cast<uint32_t*>(smem)[0] = reinterpret_cast<const uint32_t*>(x)[0];
  if (t == 1) reinterpret_cast<uint32_t*>(smem)[1] = reinterpret_cast<const uint32_t*>(x)[1];
  if (t == 1) y[0] = reinterpret_cast<const __half*>(smem)[half];
}

// Triton keeps one shared buffer (global_smem) for everything: here it is
// first a float scratch (z[t] = 2 x[(t + 1) % n], a neighbour's value), then,
// after a barrier, 32-bit words of halves read back as halves (y[t] = x[t]).
extern "C" __global__ void reuse_ref(const __half* x, __half* y, float* z) {
  const int t = threadIdx.x, n = blockDim.x;
  y[t] = x[t];
  z[t] = 2.0f * __half2float(x[(t + 1) % n]);
}
extern "C" __global__ void reuse_then_halves(const __half* x, __half* y, float* z) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int t = threadIdx.x, n = blockDim.x;
  reinterpret_cast<float*>(smem)[t] = 2.0f * __half2float(x[t]);
  __syncthreads();
  z[t] = reinterpret_cast<const float*>(smem)[(t + 1) % n];
  __syncthreads();
  if (t < n / 2) reinterpret_cast<uint32_t*>(smem)[t] = reinterpret_cast<const uint32_t*>(x)[t];
  __syncthreads();
  y[t] = reinterpret_cast<const __half*>(smem)[t];
}

// The same reuse before an ldmatrix.x4 (as ldmatrix_rows; 32 threads), and
// its reference (256 threads: y as ldmatrix_ref, z from the first 32).
extern "C" __global__ void reuse_ldmatrix_ref(const __half* x, __half* y, float* z) {
  const int e = threadIdx.x, l = e / 8, q = (e % 8) / 2, i = e % 2;
  y[e] = x[8 * (8 * q + l / 4) + 2 * (l % 4) + i];
  if (e < 32) z[e] = 2.0f * __half2float(x[(e + 1) % 32]);
}
extern "C" __global__ void reuse_ldmatrix(const __half* x, __half* y, float* z) {
  extern __shared__ __align__(16) unsigned char smem[];
  const int l = threadIdx.x;
  reinterpret_cast<float*>(smem)[l] = 2.0f * __half2float(x[l]);
  __syncthreads();
  z[l] = reinterpret_cast<const float*>(smem)[(l + 1) % 32];
  __syncthreads();
  reinterpret_cast<uint4*>(smem)[l] = reinterpret_cast<const uint4*>(x)[l];
  __syncthreads();
  unsigned r0, r1, r2, r3;
  const unsigned addr = static_cast<unsigned>(__cvta_generic_to_shared(smem + 16 * l));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(addr));
  unsigned* out = reinterpret_cast<unsigned*>(y) + 4 * l;
  out[0] = r0;
  out[1] = r1;
  out[2] = r2;
  out[3] = r3;
}
