// Where a TMA load with the 128-byte swizzle puts a box that starts at a
// shared address that is 128-byte aligned but not at the pattern's 1024-byte
// repeat. CUTLASS example 48's SharedStorage puts its A stages at byte 384 of
// the dynamic shared memory (after the pipeline's mbarriers), and only TMA
// and wgmma touch them. Two readings: the swizzle is a function of the
// absolute shared address (a box at 384 starts in row 3 of the pattern), or
// of the offset within the box (row 0).
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90a tma_swizzle_offset.cu -o /tmp/s -lcuda && /tmp/s
//
// One 2D f32 box of 32 x 16 (128 bytes x 16 rows) is loaded at byte offsets
// 0, 128, 384, 512 and 1024 of a 1024-aligned shared array; element (row r,
// column c) holds r * 32 + c. Prints, per offset, which reading every element
// agrees with.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <vector>

__global__ void load_at(const __grid_constant__ CUtensorMap map, int off, float* out, unsigned* base) {
  __shared__ alignas(1024) float buf[2048];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned bar_addr = unsigned(__cvta_generic_to_shared(&bar));
  const unsigned b0 = unsigned(__cvta_generic_to_shared(buf));
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) buf[i] = -1.0f;
  if (threadIdx.x == 0) {
    *base = b0;
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(32 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            b0 + unsigned(off)),
        "l"(&map), "r"(0), "r"(0), "r"(bar_addr) : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar_addr) : "memory");
  for (int i = threadIdx.x; i < 2048; i += blockDim.x) out[i] = buf[i];
}

static unsigned swz(unsigned a) { return a ^ (((a >> 7) & 7u) << 4); }

int main() {
  const int rows = 16, cols = 32;
  float *a, *out;
  unsigned* base;
  cudaMalloc(&a, rows * cols * 4);
  cudaMalloc(&out, 2048 * 4);
  cudaMalloc(&base, 4);
  std::vector<float> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = float(i);
  cudaMemcpy(a, h.data(), h.size() * 4, cudaMemcpyHostToDevice);
  CUtensorMap map;
  cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)}, strides[1] = {cuuint64_t(cols * 4)};
  cuuint32_t box[2] = {32, 16}, es[2] = {1, 1};
  if (cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, dims, strides, box, es,
                             CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_NONE,
                             CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE) != CUDA_SUCCESS) {
    std::printf("encode failed\n");
    return 1;
  }
  for (int off : {0, 128, 384, 512, 1024}) {
    load_at<<<1, 128>>>(map, off, out, base);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
      std::printf("offset %4d: %s\n", off, cudaGetErrorString(e));
      return 1;
    }
    std::vector<float> o(2048);
    unsigned b0 = 0;
    cudaMemcpy(o.data(), out, 2048 * 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(&b0, base, 4, cudaMemcpyDeviceToHost);
    int absolute = 0, relative = 0;
    for (int i = 0; i < rows * cols; ++i) {
      const unsigned b = unsigned(i) * 4;  // the element's byte in the unswizzled box
      const unsigned at_abs = swz(b0 + unsigned(off) + b) - b0;
      const unsigned at_rel = unsigned(off) + swz(b);
      absolute += o[at_abs / 4] == float(i);
      relative += o[at_rel / 4] == float(i);
    }
    std::printf("offset %4d (shared address %u, %% 1024 = %u): %d of %d elements where the absolute-address swizzle "
                "puts them, %d where a box-relative one would\n",
                off, b0 + unsigned(off), (b0 + unsigned(off)) % 1024, absolute, rows * cols, relative);
  }
  return 0;
}
