// TMA kernels for CTA classes (tests/equiv/cta_classes_test.cpp): each CTA
// loads an 8-row x 16-column box of an R x C f32 tensor through a
// CUtensorMap (dims innermost first: {C, R}), the box's coordinates moving
// with blockIdx, and writes its tile of the output. Each spec runs with
// classes and CTA by CTA; both must give the same verdict.
// nvcc 13: nvcc -ptx -O3 -arch=sm_90a -lineinfo tma_classes.cu -o tma_classes.ptx
#include <cuda.h>

namespace {

__device__ unsigned smem_u32(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

// One box into `tile`, completed on `bar` (thread 0 issues and arms; every
// thread waits for phase 0).
__device__ void load_box(float (*tile)[16], unsigned long long* bar, const CUtensorMap* map, int col0, int row0) {
  const unsigned b = smem_u32(bar);
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(b));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(8 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            smem_u32(tile)),
        "l"(map), "r"(col0), "r"(row0), "r"(b)
        : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }"
                 : "=r"(done)
                 : "r"(b)
                 : "memory");
}

}  // namespace

// The references, one thread per element: y = 2 x, and y = x + its right
// neighbour in the row (0 past the row's end) or in the flat array (the
// next row's first element past a row's end: another function).
extern "C" __global__ void scale_ref(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2.0f * x[i];
}
extern "C" __global__ void pairs_ref(const float* x, float* y, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  y[i] = x[i] + (i % cols + 1 < cols ? x[i + 1] : 0.0f);
}
extern "C" __global__ void pairs_flat_ref(const float* x, float* y, int rows, int cols) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= rows * cols) return;
  y[i] = x[i] + (i + 1 < rows * cols ? x[i + 1] : 0.0f);
}

// y[i] = x[i] + x[i + 1] for i < n, x holding at least n + 1 elements.
extern "C" __global__ void pairs_next_ref(const float* x, float* y, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = x[i] + x[i + 1];
}

// y = 2 x by 8 x 16 tiles: the box at (16 blockIdx.x, 8 blockIdx.y), masked
// stores. Correct at every R, C: an edge box is partly outside x, its
// elements there read as zero and are not stored.
extern "C" __global__ void tma_scale(const __grid_constant__ CUtensorMap x_map, float* y, int rows, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 16, row0 = blockIdx.y * 8;
  load_box(tile, &bar, &x_map, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (row0 + r < rows && col0 + c < cols) y[(row0 + r) * cols + col0 + c] = 2.0f * tile[r][c];
}

// The same, the tile written back by a TMA store (st.shared, the proxy
// fence, a barrier, one thread's store and its wait): the store clips at
// the tensor's bounds.
extern "C" __global__ void tma_scale_store(const __grid_constant__ CUtensorMap x_map,
                                           const __grid_constant__ CUtensorMap y_map) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(128) float out[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 16, row0 = blockIdx.y * 8;
  load_box(tile, &bar, &x_map, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  out[r][c] = 2.0f * tile[r][c];
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();
  if (threadIdx.x == 0) {
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(&y_map), "r"(col0),
                 "r"(row0), "r"(smem_u32(out))
                 : "memory");
    asm volatile("cp.async.bulk.commit_group;");
    asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
  }
}

// Bug: the CTAs with (blockIdx.x + blockIdx.y) % 3 == 2 load the box one
// tile to the right of their own (a CTA-index dependent branch).
extern "C" __global__ void tma_scale_off_tile(const __grid_constant__ CUtensorMap x_map, float* y, int rows, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 16, row0 = blockIdx.y * 8;
  const int load_col = (blockIdx.x + blockIdx.y) % 3 == 2 ? col0 + 16 : col0;
  load_box(tile, &bar, &x_map, load_col, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (row0 + r < rows && col0 + c < cols) y[(row0 + r) * cols + col0 + c] = 2.0f * tile[r][c];
}

// Bug: the CTAs with blockIdx.x == 2 read another tensor's map.
extern "C" __global__ void tma_scale_wrong_map(const __grid_constant__ CUtensorMap x_map,
                                               const __grid_constant__ CUtensorMap z_map, float* y, int rows, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 16, row0 = blockIdx.y * 8;
  load_box(tile, &bar, blockIdx.x == 2 ? &z_map : &x_map, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (row0 + r < rows && col0 + c < cols) y[(row0 + r) * cols + col0 + c] = 2.0f * tile[r][c];
}

// y[r][c] = x[r][c] + x[r][c + 1]: boxes 16 wide at columns 15 blockIdx.x
// (neighbours overlap by a column), 15 outputs a row. At the right edge the
// box is partly outside x and the neighbour of the last column is the zero
// fill: pairs_ref's function at every size, not pairs_flat_ref's (whose
// neighbour there is the next row's first element).
extern "C" __global__ void tma_pairs(const __grid_constant__ CUtensorMap x_map, float* y, int rows, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 15, row0 = blockIdx.y * 8;
  load_box(tile, &bar, &x_map, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (c < 15 && row0 + r < rows && col0 + c < cols) y[(row0 + r) * cols + col0 + c] = tile[r][c] + tile[r][c + 1];
}

// Row of tiles y through maps[y] (maps behind a pointer; R <= 16: two rows
// of tiles, two maps): the map operand's address moves with the CTA index,
// which CTA classes do not follow (another CTA reads another map): CTA by
// CTA. With maps {x, x} equivalent; with {x, z} the second row reads z.
extern "C" __global__ void tma_scale_map_rows(const CUtensorMap* maps, float* y, int rows, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 16, row0 = blockIdx.y * 8;
  load_box(tile, &bar, maps + blockIdx.y, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (row0 + r < rows && col0 + c < cols) y[(row0 + r) * cols + col0 + c] = 2.0f * tile[r][c];
}

// tma_pairs for whole tiles only (C a multiple of 15, R of 8): no bounds
// masks, so the last CTA of a row runs the very instructions of the others,
// with the same outcomes; only its box, which reaches one column past x,
// tells it apart (its last column's neighbour is the zero fill).
extern "C" __global__ void tma_pairs_whole(const __grid_constant__ CUtensorMap x_map, float* y, int cols) {
  __shared__ alignas(128) float tile[8][16];
  __shared__ alignas(8) unsigned long long bar;
  const int col0 = blockIdx.x * 15, row0 = blockIdx.y * 8;
  load_box(tile, &bar, &x_map, col0, row0);
  const int r = threadIdx.x / 16, c = threadIdx.x % 16;
  if (c < 15) y[(row0 + r) * cols + col0 + c] = tile[r][c] + tile[r][c + 1];
}
