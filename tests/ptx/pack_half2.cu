// Kernels for tests/ptx/nvcc_forms_test.cpp; pack_half2.ptx is
// nvcc -arch=sm_80 -O3 -ptx pack_half2.cu (CUDA 13.0). __floats2half2_rn(a, b)
// is cvt.rn.f16x2.f32 d, b, a: the first argument goes to the low half.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

// y[2t] = x[2t] + 1, y[2t + 1] = 3 x[2t + 1], through a packed half2.
extern "C" __global__ void pack_half2(const float* x, float* y) {
  int t = threadIdx.x;
  __half2 h = __floats2half2_rn(x[2 * t] + 1.0f, 3.0f * x[2 * t + 1]);
  y[2 * t] = __low2float(h);
  y[2 * t + 1] = __high2float(h);
}

// The same through a packed bfloat162.
extern "C" __global__ void pack_bf162(const float* x, float* y) {
  int t = threadIdx.x;
  __nv_bfloat162 h = __floats2bfloat162_rn(x[2 * t] + 1.0f, 3.0f * x[2 * t + 1]);
  y[2 * t] = __low2float(h);
  y[2 * t + 1] = __high2float(h);
}

extern "C" __global__ void pack_ref(const float* x, float* y) {
  int t = threadIdx.x;
  y[2 * t] = x[2 * t] + 1.0f;
  y[2 * t + 1] = 3.0f * x[2 * t + 1];
}

// The halves read back in the wrong order: not equivalent to pack_ref.
extern "C" __global__ void pack_half2_swapped(const float* x, float* y) {
  int t = threadIdx.x;
  __half2 h = __floats2half2_rn(x[2 * t] + 1.0f, 3.0f * x[2 * t + 1]);
  y[2 * t] = __high2float(h);
  y[2 * t + 1] = __low2float(h);
}

// A packed half2 stored straight into a half tensor (one 32-bit store of two
// elements): y[2t] = x[2t] + 1, y[2t + 1] = 3 x[2t + 1].
extern "C" __global__ void pack_half2_store(const float* x, __half2* y) {
  int t = threadIdx.x;
  y[t] = __floats2half2_rn(x[2 * t] + 1.0f, 3.0f * x[2 * t + 1]);
}

extern "C" __global__ void pack_half_store_ref(const float* x, __half* y) {
  int t = threadIdx.x;
  y[2 * t] = __float2half(x[2 * t] + 1.0f);
  y[2 * t + 1] = __float2half(3.0f * x[2 * t + 1]);
}

// Half data moved as uint4 (8 halves at a time) through shared memory, the
// way tiled kernels stage it: y[8t .. 8t+7] = h[8u .. 8u+7], u = (t + 1) % 4.
extern "C" __global__ void copy_uint4(const __half* h, __half* y) {
  __shared__ uint4 s[4];
  int t = threadIdx.x;
  s[t] = reinterpret_cast<const uint4*>(h)[t];
  __syncthreads();
  reinterpret_cast<uint4*>(y)[t] = s[(t + 1) % 4];
}

extern "C" __global__ void copy_ref(const __half* h, __half* y) {
  int t = threadIdx.x;
  for (int i = 0; i < 8; ++i) y[8 * t + i] = h[8 * ((t + 1) % 4) + i];
}
