// By-value struct parameters, as CUTLASS passes its Params (tests/cases/structs;
// nvcc 13, -arch=sm_90a -ptx -lineinfo -O3). Each spec gives the struct
// field by field ("struct" in docs/cli.md).
#include <cuda.h>

struct Params {
  int m, n;          // bytes 0, 4
  const float* a;    // 8
  float* c;          // 16
  float alpha;       // 24
  int stride[2];     // 28, 32 (row, column)
};

// c = alpha * a over an m x n matrix, with a's strides from the struct.
extern "C" __global__ void scale_struct(Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.m * p.n) return;
  int r = i / p.n, col = i % p.n;
  p.c[i] = p.alpha * p.a[r * p.stride[0] + col * p.stride[1]];
}

// A wrong twin: the bound is m * m, so for m < n the last rows are missing.
extern "C" __global__ void scale_struct_bound(Params p) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= p.m * p.m) return;
  int r = i / p.n, col = i % p.n;
  p.c[i] = p.alpha * p.a[r * p.stride[0] + col * p.stride[1]];
}

extern "C" __global__ void scale_ref(const float* a, float* c, float alpha, int m, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < m * n) c[i] = alpha * a[i];
}

// A CUtensorMap inside a struct (CUTLASS's TMA Params hold theirs so): CTA b
// loads rows [16 b, 16 b + 16) of A through the map and writes twice each
// element to c.
struct TmaParams {
  CUtensorMap a_map;  // bytes 0-127
  float* c;           // 128
  int m;              // 136
};

extern "C" __global__ void scale_rows_struct(const __grid_constant__ TmaParams p) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned b = unsigned(__cvta_generic_to_shared(&bar));
  const int row0 = blockIdx.x * 16;
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(16 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            unsigned(__cvta_generic_to_shared(tile))),
        "l"(&p.a_map), "r"(0), "r"(row0), "r"(b)
        : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }"
                 : "=r"(done)
                 : "r"(b)
                 : "memory");
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = row0 + i / 16;
    if (r < p.m) p.c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

extern "C" __global__ void scale_rows_ref(const float* a, float* c, int m) {
  for (int i = threadIdx.x; i < m * 16; i += blockDim.x) c[i] = a[i] * 2.0f;
}

// A __half is a struct of one 16-bit field: nvcc passes it by value as
// .param .align 2 .b8 p[2], which a scalar of its size fills.
#include <cuda_fp16.h>
extern "C" __global__ void scale_half(const float* a, float* c, __half alpha, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = __half2float(alpha) * a[i];
}
