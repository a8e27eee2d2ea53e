// TMA copies over tensor maps, for tests/cases/tensor_maps (nvcc 13,
// -arch=sm_90a -ptx -lineinfo). Each CTA owns 16 rows of an m x 16 f32
// matrix; tools/gpu_checks/tma_bounds.cu shows what an H200 does with boxes
// outside the map.
#include <cuda.h>

namespace {

__device__ void init_barrier(unsigned bar) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
}

// Thread 0 loads the 16 x 16 box at (0, row0) of the map into tile; every
// thread waits for it.
__device__ void load_box(const CUtensorMap* map, float (*tile)[16], unsigned bar, int row0) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(16 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            unsigned(__cvta_generic_to_shared(tile))),
        "l"(map), "r"(0), "r"(row0), "r"(bar)
        : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0; selp.u32 %0, 1, 0, p; }"
                 : "=r"(done)
                 : "r"(bar)
                 : "memory");
}

}  // namespace

// CTA b loads rows [16 b, 16 b + 16) of A through the map and writes twice
// each element to C with plain stores, rows below m only. A CTA past the
// last tile loads a box wholly outside the map: on a GPU it reads zeros and
// writes nothing.
__global__ void scale_rows(const __grid_constant__ CUtensorMap a_map, float* c, int m) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned b = unsigned(__cvta_generic_to_shared(&bar));
  const int row0 = blockIdx.x * 16;
  init_barrier(b);
  load_box(&a_map, tile, b, row0);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = row0 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

// The same through a TMA store of C, tiles taken from the bottom up: CTA b
// owns rows [m - 16 (b + 1), m - 16 b). A CTA past the last tile stores at a
// negative row, which traps on a GPU ("illegal instruction").
__global__ void scale_rows_from_bottom(const __grid_constant__ CUtensorMap a_map,
                                       const __grid_constant__ CUtensorMap c_map, int m) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  const unsigned b = unsigned(__cvta_generic_to_shared(&bar));
  const int row0 = m - 16 * int(blockIdx.x + 1);
  init_barrier(b);
  load_box(&a_map, tile, b, row0);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) tile[i / 16][i % 16] *= 2.0f;
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&c_map), "r"(0),
                 "r"(row0), "r"(unsigned(__cvta_generic_to_shared(tile)))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
  }
}
