// A warp-specialized TMA + mbarrier pipeline, small enough for the case
// tests (tests/cases/hopper/*.json): y = 2 * x over a rows x 32 f32 tensor,
// in tiles of 8 rows. Warp 1 is the producer: one lane waits on empty[s],
// arms full[s] with the tile's bytes (mbarrier.arrive.expect_tx) and issues
// the TMA load into stage s; warp 0 consumes: it waits on full[s], scales
// the tile into y and arrives on empty[s]. Two stages, so with 4 tiles each
// stage's barriers go through phases 0 and 1.
//
//   nvcc -arch=sm_90a -ptx -lineinfo tma_pipeline.cu -o tma_pipeline.ptx
//
// BUG 0: correct. BUG 1 (tma_scale_no_release): the consumer never arrives
// on empty[s], so the producer waits forever for the third tile's stage
// while the consumer waits for it: a deadlock. BUG 2 (tma_scale_early_release):
// the consumer arrives on empty[s] before it reads the stage, so the
// producer may refill it while it is still being read: the TMA write of the
// third tile races with the reads of the first (on a GPU the consumer may
// scale a mix of both tiles). BUG 3 (tma_scale_phase_no_mod2): both sides pass the phase
// counter i / 2 without % 2 as the parity (2, 3 with 8 tiles): the PTX ISA
// allows only 0 and 1, GPUs use bit 0, so it works, with a warning.
#include <cuda.h>

namespace {

__device__ __forceinline__ unsigned smem(const void* p) { return unsigned(__cvta_generic_to_shared(p)); }

__device__ __forceinline__ void wait_parity(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 p, [%0], %1;\n"
      "  @!p bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

template <int BUG>
__device__ void scale_body(const CUtensorMap* x_map, float* y, int rows) {
  __shared__ alignas(128) float stage[2][8][32];
  __shared__ alignas(8) unsigned long long full[2], empty[2];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (int s = 0; s < 2; ++s) {
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem(&full[s])));
      asm volatile("mbarrier.init.shared::cta.b64 [%0], 32;" ::"r"(smem(&empty[s])));
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();
  const int tiles = rows / 8;
  if (warp == 1) {
    if (lane == 0)
      for (int i = 0; i < tiles; ++i) {
        const int s = i % 2;
        const unsigned phase = BUG == 3 ? i / 2 : (i / 2) % 2;
        wait_parity(smem(&empty[s]), phase ^ 1);
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem(&full[s])), "r"(8 * 32 * 4)
                     : "memory");
        asm volatile(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
                smem(&stage[s][0][0])),
            "l"(x_map), "r"(0), "r"(8 * i), "r"(smem(&full[s]))
            : "memory");
      }
    return;
  }
  for (int i = 0; i < tiles; ++i) {
    const int s = i % 2;
    const unsigned phase = BUG == 3 ? i / 2 : (i / 2) % 2;
    wait_parity(smem(&full[s]), phase);
    if (BUG == 2) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&empty[s])) : "memory");
    for (int r = 0; r < 8; ++r) y[(8 * i + r) * 32 + lane] = 2.0f * stage[s][r][lane];
    if (BUG != 1 && BUG != 2) asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem(&empty[s])) : "memory");
  }
}

}  // namespace

extern "C" __global__ void __launch_bounds__(64) tma_scale(const __grid_constant__ CUtensorMap x_map, float* y, int rows) {
  scale_body<0>(&x_map, y, rows);
}
extern "C" __global__ void __launch_bounds__(64) tma_scale_no_release(const __grid_constant__ CUtensorMap x_map, float* y,
                                                                      int rows) {
  scale_body<1>(&x_map, y, rows);
}
extern "C" __global__ void __launch_bounds__(64) tma_scale_early_release(const __grid_constant__ CUtensorMap x_map,
                                                                        float* y, int rows) {
  scale_body<2>(&x_map, y, rows);
}
extern "C" __global__ void __launch_bounds__(64) tma_scale_phase_no_mod2(const __grid_constant__ CUtensorMap x_map,
                                                                         float* y, int rows) {
  scale_body<3>(&x_map, y, rows);
}

// The reference: one CTA, each thread every blockDim.x-th element.
extern "C" __global__ void scale_ref(const float* x, float* y, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x) y[i] = 2.0f * x[i];
}
