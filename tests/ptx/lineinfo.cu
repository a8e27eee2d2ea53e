// Kernels for tests/ptx/nvcc_forms_test.cpp: lineinfo.ptx is nvcc -arch=sm_80
// -O3 -lineinfo -ptx lineinfo.cu, lineinfo_debug.ptx the same with -G instead
// of -O3 -lineinfo (CUDA 13.0): .loc lines the reports turn into lineinfo.cu:N.

// A missing __syncthreads(): thread t reads buf[t + 1], which thread t + 1
// writes (line 10) with nothing ordering the two (line 11).
extern "C" __global__ void racy_tile(const float* x, float* y) {
  __shared__ float buf[64];
  int t = threadIdx.x;
  buf[t] = 2.0f * x[t];
  y[t] = buf[(t + 1) % 64];
}

// warpSize is the PTX constant WARP_SZ.
extern "C" __global__ void warp_size(const float* x, float* y) {
  int t = threadIdx.x;
  int lane = t % warpSize, warp = t / warpSize;
  y[t] = x[warp * warpSize + (warpSize - 1 - lane)] * (float)warpSize;
}

extern "C" __global__ void warp_size_ref(const float* x, float* y) {
  int t = threadIdx.x;
  y[t] = x[(t / 32) * 32 + 31 - t % 32] * 32.0f;
}
