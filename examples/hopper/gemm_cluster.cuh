// The 2-CTA cluster form of gemm_sm90.cuh's GEMM, with TMA multicast, and
// the bugs that come with clusters. Same layouts (C = A * B^T, both
// K-major), tile (64 x 64 a CTA), block (128 consumers + 1 producer warp)
// and pipeline (2 stages, K = 384: 3 fills a stage).
//
// A cluster is two CTAs that share the 64-row block of A (launched with
// cluster dims (1, 2, 1): same blockIdx.x, neighbouring blockIdx.y). Each
// CTA loads half of the A tile (32 rows: rank r loads rows m0 + 32r ..) and
// multicasts it to both CTAs, at the same shared-memory offset, completing
// on the full[s] barrier at the same offset in each; it loads its own B tile
// alone. So each CTA's full[s] receives the whole A tile (two halves, one
// from each CTA) and its B tile: expect_tx = A + B bytes.
//
// Since CTA r writes into its peer's stage s, it may refill the stage only
// when both CTAs' consumers have released it: every consumer warp arrives on
// empty[s] of both CTAs (its own, and the peer's through mapa), so empty[s]
// counts 8 arrivals (4 warps x 2 CTAs) in each CTA.
//
// Barriers are initialized before a cluster-wide barrier (the peer's
// multicast and remote arrivals must find them initialized), and no CTA
// exits before the cluster-wide barrier at the end (the peer may still be
// writing into it or arriving on its barriers).
#pragma once
#include "gemm_sm90.cuh"

namespace hopper_gemm {

enum : int {
  kClusterTxNotDoubled = 1,  // expect_tx counts the half of A this CTA loads, not the peer's half
  kClusterLocalCount = 2,    // empty[s] initialized with the local warps' count (4) while 8 arrive
  // The consumers do not release the last STAGES fills (nothing refills
  // them), and the producer still drains the pipeline at the end: it waits
  // for those releases (the sm90 pipelines' producer_tail in 2-CTA mode).
  kClusterTailDrain = 4,
  // The consumers release stage s in their own CTA only, while empty[s]
  // counts the peer's 4 remote arrivals too (a release that never reaches
  // the peer CTA's barrier).
  kClusterLocalRelease = 8,
};

__device__ __forceinline__ uint32_t cluster_ctarank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}

__device__ __forceinline__ void cluster_sync_all() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::: "memory");
}

// Arrives on the mbarrier at the same shared-memory offset in CTA `rank` of
// the cluster.
__device__ __forceinline__ void mbar_arrive_cluster(uint64_t* bar, uint32_t rank) {
  uint32_t remote;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(smem_addr(bar)), "r"(rank));
  asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(remote) : "memory");
}

// A TMA load written to the same offset in every CTA of ctaMask, each
// completing on its own mbarrier at bar's offset.
__device__ __forceinline__ void tma_load_2d_multicast(void* dst, const CUtensorMap* map, int c0, int c1,
                                                      uint64_t* bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar)), "h"(mask)
      : "memory");
}

template <int V>
__device__ __forceinline__ void gemm_cluster_body(const CUtensorMap* a_map, const CUtensorMap* b_map, float* C, int M,
                                                  int N, int K) {
  __shared__ Smem sm;
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int m0 = blockIdx.x * BM, n0 = blockIdx.y * BN;
  const int kiters = K / BK;
  const uint32_t rank = cluster_ctarank(), peer = rank ^ 1;
  constexpr uint32_t kHalfA = kTileBytesA / 2;  // 32 rows of 128 bytes

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&sm.full[s], 1);
      mbar_init(&sm.empty[s], (V & kClusterLocalCount) ? 4 : 8);
    }
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  cluster_sync_all();

  if (warp == 4) {
    uint32_t leader;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(leader));
    if (leader) {
      for (int it = 0; it < kiters; ++it) {
        const int s = it % STAGES;
        const uint32_t visit = it / STAGES;
        mbar_wait(&sm.empty[s], (visit & 1) ^ 1);
        const uint32_t tx = ((V & kClusterTxNotDoubled) ? kHalfA : kTileBytesA) + kTileBytesB;
        mbar_arrive_expect_tx(&sm.full[s], tx);
        // This CTA's half of A, to both CTAs; then its own B tile.
        tma_load_2d_multicast(reinterpret_cast<char*>(sm.a[s]) + rank * kHalfA, a_map, it * BK, m0 + 32 * rank,
                              &sm.full[s], 0x3);
        tma_load_2d(sm.b[s], b_map, it * BK, n0, &sm.full[s]);
      }
      if (V & kClusterTailDrain)
        for (int it = kiters; it < kiters + STAGES; ++it)  // producer_tail: wait until every stage is released
          mbar_wait(&sm.empty[it % STAGES], ((it / STAGES) & 1) ^ 1);
    }
    __syncwarp();
  } else {
    float d[32];
#pragma unroll
    for (int i = 0; i < 32; ++i) d[i] = 0.f;
    for (int it = 0; it < kiters; ++it) {
      const int s = it % STAGES;
      const uint32_t visit = it / STAGES;
      mbar_wait(&sm.full[s], visit & 1);
      asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
      const uint32_t a_base = smem_addr(sm.a[s]), b_base = smem_addr(sm.b[s]);
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
        wgmma_m64n64k16(d, smem_desc_k_sw128(a_base + kk * 32), smem_desc_k_sw128(b_base + kk * 32));
      asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
      asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
      // This warp is done with stage s: release it in both CTAs, since
      // both CTAs' producers write into it.
      if (lane == 0 && !((V & kClusterTailDrain) && it >= kiters - STAGES)) {
        mbar_arrive(&sm.empty[s]);
        if (!(V & kClusterLocalRelease)) mbar_arrive_cluster(&sm.empty[s], peer);
      }
    }
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + 16 * warp + lane / 4 + 8 * h, col = n0 + 8 * j + 2 * (lane % 4);
        if (row < M && col < N)
          *reinterpret_cast<float2*>(&C[row * N + col]) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }
  }
  // Neither CTA leaves while its peer may still write into its shared
  // memory or arrive on its barriers.
  cluster_sync_all();
}

}  // namespace hopper_gemm
