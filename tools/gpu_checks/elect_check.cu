// Which lane elect.sync elects on this GPU (sm_90 or newer). The PTX ISA
// (elect.sync) promises only a deterministic choice for a given member mask;
// the evaluator elects the lowest lane of the mask among the lanes that have
// not exited (src/eval/machine_warp.cpp). This checks that on hardware, for
// many random masks, with the lanes outside the mask exited first.
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90a elect_check.cu -o /tmp/e && /tmp/e
//
// Prints one line per mismatch and "ALL OK" (exit 0) or "FAILED" (exit 1).
#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

__global__ void elect_kernel(const std::uint32_t* masks, std::uint32_t* leader, std::uint32_t* flag_lane) {
  const std::uint32_t mask = masks[blockIdx.x];
  const std::uint32_t lane = threadIdx.x % 32;
  if (!(mask >> lane & 1)) return;  // lanes outside the mask leave
  std::uint32_t d, p;
  asm volatile("{ .reg .pred q; elect.sync %0|q, %2; selp.u32 %1, 1, 0, q; }" : "=r"(d), "=r"(p) : "r"(mask));
  if (p) flag_lane[blockIdx.x] = lane;
  if (lane == 31 - __clz(mask)) leader[blockIdx.x] = d;  // the highest member reports what it was told
}

int main() {
  std::vector<std::uint32_t> masks = {0xffffffffu, 0xfffffff0u, 0x80000000u, 0x00000001u, 0x0000ff00u, 0xaaaaaaaau};
  std::mt19937 rng(7);
  while (masks.size() < 4096) {
    std::uint32_t m = rng() & rng();
    if (m) masks.push_back(m);
  }
  const int n = int(masks.size());
  std::uint32_t *dm, *dl, *df;
  cudaMalloc(&dm, n * 4);
  cudaMalloc(&dl, n * 4);
  cudaMalloc(&df, n * 4);
  cudaMemcpy(dm, masks.data(), n * 4, cudaMemcpyHostToDevice);
  cudaMemset(dl, 0xff, n * 4);
  cudaMemset(df, 0xff, n * 4);
  elect_kernel<<<n, 32>>>(dm, dl, df);
  cudaError_t e = cudaDeviceSynchronize();
  if (e != cudaSuccess) {
    std::printf("CUDA error: %s\nFAILED\n", cudaGetErrorString(e));
    return 1;
  }
  std::vector<std::uint32_t> leader(n), flag(n);
  cudaMemcpy(leader.data(), dl, n * 4, cudaMemcpyDeviceToHost);
  cudaMemcpy(flag.data(), df, n * 4, cudaMemcpyDeviceToHost);
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const std::uint32_t lowest = std::uint32_t(__builtin_ctz(masks[i]));
    if (leader[i] != lowest || flag[i] != lowest) {
      if (++bad <= 10)
        std::printf("MISMATCH mask 0x%08x: elected lane %u, predicate in lane %u, lowest lane %u\n", masks[i], leader[i],
                    flag[i], lowest);
    }
  }
  std::printf("elect.sync: %d masks, %d mismatches\n%s\n", n, bad, bad ? "FAILED" : "ALL OK");
  return bad ? 1 : 0;
}
