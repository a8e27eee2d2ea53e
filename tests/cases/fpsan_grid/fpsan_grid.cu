// Payload checks over a whole grid ("ctas": "all"; tests/cases/fpsan_grid_test.cpp).
// README.md gives the command.

// CTA b scales tile b.
__global__ void scale_tiles(const float* x, float* y) {
  unsigned i = blockIdx.x * 32 + threadIdx.x;
  y[i] = 3.0f * x[i];
}
// CTA b scales tile gridDim.x - 1 - b: the same outputs, another mapping.
__global__ void scale_tiles_reversed(const float* x, float* y) {
  unsigned i = (gridDim.x - 1 - blockIdx.x) * 32 + threadIdx.x;
  y[i] = x[i] * 3.0f;
}
// The last CTA scales by 4: only its tile differs.
__global__ void scale_tiles_last_wrong(const float* x, float* y) {
  unsigned i = blockIdx.x * 32 + threadIdx.x;
  y[i] = (blockIdx.x == gridDim.x - 1 ? 4.0f : 3.0f) * x[i];
}
// Every CTA writes y[0..31]: a race between CTAs.
__global__ void scale_tiles_overlapping(const float* x, float* y) {
  y[threadIdx.x] = 3.0f * x[blockIdx.x * 32 + threadIdx.x];
}
// atomicAdd from every CTA into one integer, against a serial sum that starts
// from y[0] as well (inout: y[0] is an input; "init": y[0] starts at a value).
__global__ void count_atomic(const int* x, int* y) {
  atomicAdd(y, x[blockIdx.x * 32 + threadIdx.x]);
}
__global__ void count_serial(const int* x, int* y) {
  int s = y[0];
  for (int i = 0; i < 128; ++i) s += x[i];
  y[0] = s;
}
