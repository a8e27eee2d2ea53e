// Whether compute-sanitizer's racecheck sees ldmatrix (a warp collective that
// reads rows other lanes stored) as ordering those stores. The evaluator
// treats mma.sync, ldmatrix and wmma like a warp barrier for memory (docs/
// evaluator.md, "Synchronization"); the PTX memory model gives them no
// ordering, as it gives shuffles none (shfl_order.cu).
//
//   cd tools/gpu_checks && nvcc -std=c++17 -arch=sm_90 -lineinfo ldmatrix_order.cu -o /tmp/l
//   compute-sanitizer --tool racecheck /tmp/l plain     # st.shared, then ldmatrix
//   compute-sanitizer --tool racecheck /tmp/l syncwarp  # with __syncwarp() between
#include <cstdint>
#include <cstdio>
#include <cstring>

template <bool WithSync>
__global__ void load_tile(const std::uint32_t* x, std::uint32_t* y) {
  // An 8 x 8 tile of 16-bit values: 8 rows of 16 bytes; lane t stores the
  // 4-byte word t (row t / 4), then every lane takes its fragment with
  // ldmatrix.x1 (lanes 0-7 give the row addresses).
  __shared__ __align__(16) std::uint32_t tile[32];
  const unsigned t = threadIdx.x;
  tile[t] = x[t];
  if (WithSync) __syncwarp();
  const unsigned row = static_cast<unsigned>(__cvta_generic_to_shared(&tile[(t % 8) * 4]));
  std::uint32_t frag;
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];" : "=r"(frag) : "r"(row));
  y[t] = frag;
}

int main(int argc, char** argv) {
  const bool sync = argc > 1 && std::strcmp(argv[1], "syncwarp") == 0;
  std::uint32_t host[32], *x, *y;
  for (int i = 0; i < 32; ++i) host[i] = 0x10001u * std::uint32_t(i);
  cudaMalloc(&x, sizeof host);
  cudaMalloc(&y, sizeof host);
  cudaMemcpy(x, host, sizeof host, cudaMemcpyHostToDevice);
  if (sync)
    load_tile<true><<<1, 32>>>(x, y);
  else
    load_tile<false><<<1, 32>>>(x, y);
  cudaMemcpy(host, y, sizeof host, cudaMemcpyDeviceToHost);
  bool same = true;
  for (int i = 0; i < 32; ++i) same = same && host[i] == 0x10001u * std::uint32_t(i);  // x1: lane t gets word t
  std::printf("%s: fragments %s (%s)\n", sync ? "syncwarp" : "plain", same ? "as stored" : "differ",
              cudaGetErrorString(cudaGetLastError()));
  return 0;
}
