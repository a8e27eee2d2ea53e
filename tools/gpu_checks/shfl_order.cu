// Whether compute-sanitizer's racecheck sees a shuffle as ordering shared
// memory. tileverify follows the PTX memory model: shfl.sync (like vote.sync,
// redux.sync and elect.sync) waits for its members but orders no memory; only
// bar.warp.sync (__syncwarp) "also guarantee[s] memory ordering" (PTX ISA).
// So lane i storing s[i], shuffling, then reading s[i ^ 1] is a race, and a
// __syncwarp() before the read orders it (docs/evaluator.md, "Synchronization").
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90 -lineinfo shfl_order.cu -o /tmp/s
//   compute-sanitizer --tool racecheck /tmp/s shfl      # the shuffle alone
//   compute-sanitizer --tool racecheck /tmp/s syncwarp  # with __syncwarp()
//
// The program prints the outputs' checksum; racecheck prints its hazards.
#include <cstdio>
#include <cstring>

template <bool WithSync>
__global__ void exchange(const float* x, float* y) {
  __shared__ float s[32];
  const int t = threadIdx.x;
  s[t] = x[t];
  const float v = __shfl_xor_sync(0xffffffffu, x[t], 1);
  if (WithSync) __syncwarp();
  y[t] = s[t ^ 1] + v;
}

int main(int argc, char** argv) {
  const bool sync = argc > 1 && std::strcmp(argv[1], "syncwarp") == 0;
  float host[32], *x, *y;
  for (int i = 0; i < 32; ++i) host[i] = float(i);
  cudaMalloc(&x, sizeof host);
  cudaMalloc(&y, sizeof host);
  cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  if (sync)
    exchange<true><<<1, 32>>>(x, y);
  else
    exchange<false><<<1, 32>>>(x, y);
  cudaMemcpy(host, y, sizeof host, cudaMemcpyDeviceToHost);
  float sum = 0;
  for (float v : host) sum += v;
  std::printf("%s: sum %g (%s)\n", sync ? "syncwarp" : "shfl", sum, cudaGetErrorString(cudaGetLastError()));
  return 0;
}
