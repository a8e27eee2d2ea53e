// Tensor maps behind a pointer (tests/cases/map_pointers; nvcc 13,
// -arch=sm_90a -ptx -lineinfo -O3): the host encodes CUtensorMaps with
// cuTensorMapEncodeTiled, copies them to global memory with cudaMemcpy, and
// passes `const CUtensorMap*`, as the public "fast.cu" H100 GEMMs do. Each
// spec gives the buffer's maps as "tensor_maps" (docs/cli.md, "Tensor maps
// behind a pointer").
#include <cuda.h>

// CTA b loads rows [16 b, 16 b + 16) of the map's 16-column f32 tensor by
// TMA into `tile`, completing on the mbarrier `bar` (phase 0); the map is
// prefetched and acquired first, as code that reads maps from global memory
// does.
__device__ void load_rows(const CUtensorMap* map, float (*tile)[16], unsigned long long* bar) {
  const unsigned b = unsigned(__cvta_generic_to_shared(bar));
  if (threadIdx.x == 0) {
    asm volatile("prefetch.tensormap [%0];" ::"l"(map) : "memory");
    asm volatile("fence.proxy.tensormap::generic.acquire.gpu [%0], 128;" ::"l"(map) : "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(16 * 16 * 4));
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
            unsigned(__cvta_generic_to_shared(tile))),
        "l"(map), "r"(0), "r"(int(blockIdx.x) * 16), "r"(b)
        : "memory");
  }
  unsigned done = 0;
  while (!done)
    asm volatile("{ .reg .pred q; mbarrier.try_wait.parity.shared::cta.b64 q, [%1], 0; selp.u32 %0, 1, 0, q; }"
                 : "=r"(done)
                 : "r"(b)
                 : "memory");
}

__device__ void init_bar(unsigned long long* bar) {
  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(unsigned(__cvta_generic_to_shared(bar))));
    asm volatile("fence.proxy.async.shared::cta;");
  }
  __syncthreads();
}

// c = 2 a through map `which` of the buffer.
extern "C" __global__ void rows_by_pointer(const CUtensorMap* maps, float* c, int m, int which) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  init_bar(&bar);
  load_rows(&maps[which], tile, &bar);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

// The same through the map `byte` bytes into the buffer (a misaligned or
// out-of-buffer address when `byte` is not 128 k for a map k of the buffer).
extern "C" __global__ void rows_at_byte(const CUtensorMap* maps, float* c, int m, int byte) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  init_bar(&bar);
  load_rows(reinterpret_cast<const CUtensorMap*>(reinterpret_cast<const char*>(maps) + byte), tile, &bar);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

// The map's index read from tensor data: which map TMA uses depends on the
// input.
extern "C" __global__ void rows_by_data(const CUtensorMap* maps, const int* which, float* c, int m) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  init_bar(&bar);
  load_rows(&maps[which[0]], tile, &bar);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

// c = a - b, a through maps[0] and b through maps[1] of one buffer.
extern "C" __global__ void diff_rows(const CUtensorMap* maps, float* c, int m) {
  __shared__ alignas(128) float ta[16][16], tb[16][16];
  __shared__ alignas(8) unsigned long long bar_a, bar_b;  // one each: a parity wait sees one phase
  init_bar(&bar_a);
  init_bar(&bar_b);
  load_rows(&maps[0], ta, &bar_a);
  load_rows(&maps[1], tb, &bar_b);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = ta[i / 16][i % 16] - tb[i / 16][i % 16];
  }
}

// A kernel that writes into its map buffer (its first word) before using
// the map: the map TMA reads would be another one.
extern "C" __global__ void rows_overwrite(CUtensorMap* maps, float* c, int m) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) reinterpret_cast<volatile int*>(maps)[0] = 0;
  init_bar(&bar);
  load_rows(maps, tile, &bar);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

// A kernel that points its map at another tensor (tensormap.replace) before
// using it.
extern "C" __global__ void rows_replace(CUtensorMap* maps, const float* other, float* c, int m) {
  __shared__ alignas(128) float tile[16][16];
  __shared__ alignas(8) unsigned long long bar;
  if (threadIdx.x == 0) {
    asm volatile("tensormap.replace.tile.global_address.global.b1024.b64 [%0], %1;" ::"l"(maps), "l"(other) : "memory");
    asm volatile("fence.proxy.tensormap::generic.release.gpu;" ::: "memory");
  }
  init_bar(&bar);
  load_rows(maps, tile, &bar);
  for (int i = threadIdx.x; i < 256; i += blockDim.x) {
    const int r = blockIdx.x * 16 + i / 16;
    if (r < m) c[r * 16 + i % 16] = tile[i / 16][i % 16] * 2.0f;
  }
}

extern "C" __global__ void rows_ref(const float* a, float* c, int m) {
  for (int i = threadIdx.x; i < m * 16; i += blockDim.x) c[i] = a[i] * 2.0f;
}

extern "C" __global__ void diff_ref(const float* a, const float* b, float* c, int m) {
  for (int i = threadIdx.x; i < m * 16; i += blockDim.x) c[i] = a[i] - b[i];
}
