// Whether a wgmma of one warp can read shared memory before another warp of
// its warpgroup has written it. The PTX ISA gives the wgmma instructions no
// memory ordering across warps (each is .sync over its own warp), while its
// outline of a wgmma has the warpgroup write the operands, fence and issue
// with no barrier (docs/evaluator.md, "Ordering across the warpgroup").
//
//   nvcc -std=c++17 -gencode arch=compute_90a,code=sm_90a tools/gpu_checks/wgmma_cross_warp.cu -o /tmp/x && /tmp/x
//
// One warpgroup: B (8 x 16 f16, no swizzle) is zeroed, a __syncthreads(),
// then one warp spins `spin` clock cycles and writes B = 1; every thread
// executes fence.proxy.async and the warpgroup's wgmma.fence /
// m64n8k16 mma_async (A = 1 from registers, scale-d false) / commit / wait.
// Each of the 512 results is 16 if the wgmma read B after the writer's
// stores, 0 if before. Prints the wrong results per reading warp; `late`
// as the writer warp stores B after its wait_group instead (every result 0:
// the check sees a read before the writes). Last result:
// results/wgmma_cross_warp_h200.txt.
#include <cstdint>
#include <cstdio>

#include "check_common.hpp"

__global__ void wg(float* out, long long spin, int writer, int late) {
  __shared__ __align__(1024) uint16_t b[128];
  const int t = threadIdx.x;
  b[t] = 0;
  __syncthreads();
  auto write = [&] {
    const long long s = clock64();
    while (clock64() - s < spin) {
    }
    for (int i = t % 32; i < 128; i += 32) b[i] = 0x3c00;  // f16 1.0
  };
  if (t / 32 == writer && !late) write();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const uint32_t a = 0x3c003c00;
  float d0 = 0, d1 = 0, d2 = 0, d3 = 0;
  // start address >> 4; leading byte offset 128 (the second core matrix
  // along K); stride byte offset 256.
  const uint64_t desc = ((uint64_t)((__cvta_generic_to_shared(b) >> 4) & 0x3fff)) | (8ull << 16) | (16ull << 32);
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, 0, 0;\nwgmma.fence.sync.aligned;\n"
      "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0, %1, %2, %3}, {%4, %4, %4, %4}, %5, p, 1, 1, 0;\n"
      "wgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\n}"
      : "+f"(d0), "+f"(d1), "+f"(d2), "+f"(d3)
      : "r"(a), "l"(desc)
      : "memory");
  if (t / 32 == writer && late) write();
  out[t * 4] = d0;
  out[t * 4 + 1] = d1;
  out[t * 4 + 2] = d2;
  out[t * 4 + 3] = d3;
}

int main() {
  float* out;
  CK(cudaMalloc(&out, 512 * sizeof(float)));
  float host[512];
  for (int late = 0; late < 2; ++late)
    for (int writer : {0, 3})
      for (long long spin : {0LL, 10000LL, 1000000LL}) {
        int wrong[4] = {0, 0, 0, 0};
        for (int rep = 0; rep < 50; ++rep) {
          wg<<<1, 128>>>(out, spin, writer, late);
          CK(cudaGetLastError());
          CK(cudaMemcpy(host, out, sizeof host, cudaMemcpyDeviceToHost));
          for (int i = 0; i < 512; ++i)
            if (host[i] != 16.0f) ++wrong[i / 128];
        }
        std::printf("%s writer warp %d, spin %lld: wrong results read by warps 0-3: %d %d %d %d (of 6400 each)\n",
                    late ? "late" : "before", writer, spin, wrong[0], wrong[1], wrong[2], wrong[3]);
      }
  return 0;
}
