// What a TMA copy does with a box partly or wholly outside its tensor map
// (cp.async.bulk.tensor, .tile mode, 2D, f32, a 32 x 32 tensor, 16 x 16 box
// or 32 x 16 with 128B swizzle): does it trap, fill, or skip? One copy per
// process, since a trap ends the CUDA context:
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90a tma_bounds.cu -o /tmp/t -lcuda
//   for a in "0 32 0 0" "-16 0 0 0" "0 32 1 0" "0 -1 1 0"; do /tmp/t $a; done
//
// Arguments: x0 y0 store(0/1) swizzle(0/1). Measured on an NVIDIA H200,
// driver 580.159.04 (tileverify helper session, 2026-11-26):
//   load, any box position (in, partly out, wholly out past the end, negative,
//     x0 = 2147483000, with or without 128B swizzle): no error; the
//     out-of-bound elements read 0 and the mbarrier completes with the whole
//     box's bytes;
//   store, boxes partly or wholly past the end (0 32, 64 64): no error; the
//     elements outside are not written;
//   store with any negative coordinate (-1 0, 0 -1, -16 -16, 40 -4, with or
//     without swizzle, partly or wholly outside): error 715, "an illegal
//     instruction was encountered".
// So a stray CTA's TMA *load* past the tensor is harmless (it reads zeros),
// while a TMA *store* at a negative coordinate kills the launch.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cstdio>
#include <cstdlib>
#include <vector>

template <int SWZ>
__global__ void tma(const __grid_constant__ CUtensorMap map, float* c, int x0, int y0, int store, int* timed_out) {
  __shared__ alignas(1024) float tile[16][32];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned bar_addr = unsigned(__cvta_generic_to_shared(&bar));
  const unsigned t = unsigned(__cvta_generic_to_shared(tile));
  if (store) {
    for (int i = threadIdx.x; i < 512; i += blockDim.x) tile[i / 32][i % 32] = 7.0f;
    asm volatile("fence.proxy.async.shared::cta;");
    __syncthreads();
    if (threadIdx.x == 0) {
      asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&map), "r"(x0),
                   "r"(y0), "r"(t) : "memory");
      asm volatile("cp.async.bulk.commit_group;");
      asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
    }
    return;
  }
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(SWZ ? 16 * 32 * 4 : 16 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(t),
        "l"(&map), "r"(x0), "r"(y0), "r"(bar_addr) : "memory");
  }
  unsigned done = 0;
  for (long i = 0; i < 20000000 && !done; ++i)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done) : "r"(bar_addr) : "memory");
  if (!done) { atomicAdd(timed_out, 1); return; }
  if (threadIdx.x == 0) c[0] = tile[0][0];
}

int main(int argc, char** argv) {
  const int x0 = atoi(argv[1]), y0 = atoi(argv[2]), store = atoi(argv[3]), swz = atoi(argv[4]);
  const int M = 32, K = 32;
  float *a, *c; int* to;
  cudaMalloc(&a, M * K * 4); cudaMalloc(&c, 4); cudaMalloc(&to, 4);
  std::vector<float> h(M * K, 1.0f);
  cudaMemcpy(a, h.data(), M * K * 4, cudaMemcpyHostToDevice);
  cudaMemset(to, 0, 4); cudaMemset(c, 0xff, 4);
  CUtensorMap map;
  cuuint64_t dims[2] = {K, M}, strides[1] = {K * 4};
  cuuint32_t box[2] = {swz ? 32u : 16u, 16}, es[2] = {1, 1};
  CUresult e = cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, a, dims, strides, box, es,
                                      CU_TENSOR_MAP_INTERLEAVE_NONE, swz ? CU_TENSOR_MAP_SWIZZLE_128B : CU_TENSOR_MAP_SWIZZLE_NONE,
                                      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (e != CUDA_SUCCESS) { printf("encode failed %d\n", int(e)); return 1; }
  if (swz) tma<1><<<1, 128>>>(map, c, x0, y0, store, to); else tma<0><<<1, 128>>>(map, c, x0, y0, store, to);
  cudaError_t err = cudaDeviceSynchronize();
  int t = -1; float v = 0;
  std::vector<float> back(M * K);
  if (err == cudaSuccess) {
    cudaMemcpy(&t, to, 4, cudaMemcpyDeviceToHost); cudaMemcpy(&v, c, 4, cudaMemcpyDeviceToHost);
    cudaMemcpy(back.data(), a, M * K * 4, cudaMemcpyDeviceToHost);
    int sevens = 0; for (float f : back) sevens += f == 7.0f;
    printf("%s x0=%d y0=%d swz=%d: ok timed_out=%d c0=%g elements stored=%d\n", store ? "store" : "load", x0, y0, swz, t, v, sevens);
  } else {
    printf("%s x0=%d y0=%d swz=%d: error %d %s\n", store ? "store" : "load", x0, y0, swz, int(err), cudaGetErrorString(err));
  }
  return 0;
}
