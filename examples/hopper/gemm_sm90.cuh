// A warp-specialized, pipelined sm_90a GEMM: TMA loads completing on
// mbarriers, wgmma from shared-memory matrix descriptors, and one bug per
// variant. Written for tileverify's Hopper examples (README.md beside this).
//
//   C[M,N] (f32, row-major) = A[M,K] (f16, row-major) * B[N,K]^T (f16, row-major)
//
// Both operands are K-major (K is the contiguous dimension), the layout
// wgmma reads without a transpose. One CTA computes one 64 x 64 tile of C:
// blockIdx.x picks the 64-row block of M, blockIdx.y the 64-column block of N.
// The block is 160 threads: warps 0-3 are the consumer warpgroup (wgmma needs
// a whole warpgroup starting at a warp index divisible by 4), warp 4 the
// producer, of which one elected lane issues the TMA loads.
//
// The pipeline has STAGES = 2 buffers of a 64 x 64 tile of A and of B
// (64 f16 = 128 bytes a row, so the tensor maps' 128-byte swizzle spans a
// row exactly, and wgmma reads the same swizzle). With K = 384 the loop runs
// 6 times, so each stage is filled three times: its barriers go through
// phases 0, 1 and 2, which is where phase-parity bugs show.
//
// full[s]  (count 1): the producer's arrive.expect_tx plus the bytes of both
//                     TMA loads complete it; the consumer waits on it.
// empty[s] (count 128): every consumer thread arrives once its wgmma has
//                     read the stage; the producer waits on it before
//                     refilling the stage.
#pragma once
#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>
#include <cstdint>

namespace hopper_gemm {

constexpr int BM = 64, BN = 64, BK = 64, STAGES = 2;
constexpr int kConsumers = 128, kThreads = 160;
constexpr uint32_t kTileBytesA = BM * BK * 2, kTileBytesB = BN * BK * 2;

// Variant bits: each is one bug (or the TMA-store epilogue).
enum : int {
  kTmaStore = 1,            // epilogue through shared memory and a TMA store
  kPhaseNoMod2 = 2,         // consumer waits with parity = visit count, not visit % 2
  kConsumerNoRelease = 4,   // consumer never arrives on empty[s]
  kTxTooSmall = 8,          // expect_tx counts A's bytes only
  kNoFullWait = 16,         // consumer reads a stage without waiting on full[s]
  kStoreNoProxyFence = 32,  // TMA store without fence.proxy.async after st.shared
  kReverseTiles = 64,       // tiles of M walked from the end: m0 = (M/BM - 1 - blockIdx.x) * BM
};

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(smem_addr(bar)) : "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
               : "memory");
}

// Spins until the phase of parity `parity` of bar has completed. A freshly
// initialized barrier is in phase 0, and the phase before it (parity 1)
// counts as complete: waiting for parity 1 on it returns at once, which is
// what lets the producer's first pass over the stages go without a release.
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  uint32_t done;
  do {
    asm volatile(
        "{\n\t.reg .pred p;\n\t"
        "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
        "selp.u32 %0, 1, 0, p;\n\t}"
        : "=r"(done)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
  } while (!done);
}

// A 2D TMA load of one box at (c0 innermost, c1) into shared memory, whose
// bytes complete_tx on bar. The tensor map is a __grid_constant__ kernel
// parameter: its generic address is what the instruction takes.
__device__ __forceinline__ void tma_load_2d(void* dst, const CUtensorMap* map, int c0, int c1, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];"
      ::"r"(smem_addr(dst)), "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(bar))
      : "memory");
}

__device__ __forceinline__ void tma_store_2d(const CUtensorMap* map, int c0, int c1, const void* src) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];"
               ::"l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(smem_addr(src))
               : "memory");
  asm volatile("cp.async.bulk.commit_group;" ::: "memory");
  // .read: the shared source may be reused (or the CTA exit) once read.
  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");
}

// The shared-memory matrix descriptor of a K-major tile with the 128-byte
// swizzle (PTX ISA, "Matrix Descriptor Format"): start address >> 4 in bits
// 0-13; the leading-dimension offset (bits 16-29) is not used by swizzled
// K-major layouts (1 by convention); the stride-dimension offset (bits
// 32-45) is 1024 bytes >> 4, from one 8-row group of 128-byte rows to the
// next; bits 62-63 = 1 select the 128-byte swizzle. The tile base is
// 1024-byte aligned, so the base-offset field (bits 49-51) stays 0.
__device__ __forceinline__ uint64_t smem_desc_k_sw128(uint32_t saddr) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((saddr & 0x3FFFF) >> 4);
  d |= static_cast<uint64_t>(1) << 16;
  d |= static_cast<uint64_t>(1024 >> 4) << 32;
  d |= static_cast<uint64_t>(1) << 62;
  return d;
}

// d += A(64 x 16 from desc_a) * B(64 x 16 from desc_b)^T, the warpgroup's
// 64 x 64 f32 accumulator spread as 32 registers a thread.
__device__ __forceinline__ void wgmma_m64n64k16(float (&d)[32], uint64_t desc_a, uint64_t desc_b) {
  asm volatile(
      "{\n\t.reg .pred p;\n\tsetp.ne.b32 p, 1, 0;\n\t"
      "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, "
      "%32, %33, p, 1, 1, 0, 0;\n\t}"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
        "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
        "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
        "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(desc_a), "l"(desc_b)
      : "memory");
}

struct alignas(1024) Smem {
  // Each tile: 64 rows of 128 bytes, 1024-byte aligned for the swizzle.
  __half a[STAGES][BM * BK];
  __half b[STAGES][BN * BK];
  uint64_t full[STAGES];
  uint64_t empty[STAGES];
};

template <int V>
__device__ __forceinline__ void gemm_body(const CUtensorMap* a_map, const CUtensorMap* b_map, float* C,
                                          const CUtensorMap* c_map, int M, int N, int K) {
  __shared__ Smem sm;
  const int tid = threadIdx.x;
  // kReverseTiles derives the tile from M rather than from the grid, as a
  // scheduler that walks tiles from the end does: a CTA beyond M/BM gets a
  // negative m0.
  const int m0 = (V & kReverseTiles) ? (M / BM - 1 - static_cast<int>(blockIdx.x)) * BM : blockIdx.x * BM;
  const int n0 = blockIdx.y * BN;
  const int kiters = K / BK;

  if (tid == 0) {
    for (int s = 0; s < STAGES; ++s) {
      mbar_init(&sm.full[s], 1);
      mbar_init(&sm.empty[s], kConsumers);
    }
    // Makes the initialized barriers visible to the async proxy (the TMA
    // unit's complete_tx) before any thread uses them.
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  }
  __syncthreads();

  if (tid >= kConsumers) {
    // Producer warp: one elected lane issues every load.
    uint32_t leader;
    asm volatile("{\n\t.reg .pred p;\n\telect.sync _|p, 0xffffffff;\n\tselp.u32 %0, 1, 0, p;\n\t}"
                 : "=r"(leader));
    if (leader) {
      for (int it = 0; it < kiters; ++it) {
        const int s = it % STAGES;
        const uint32_t visit = it / STAGES;
        // Wait until the consumers released the previous fill of stage s
        // (on the first pass, the "previous phase" of a fresh barrier).
        mbar_wait(&sm.empty[s], (visit & 1) ^ 1);
        const uint32_t tx = (V & kTxTooSmall) ? kTileBytesA : kTileBytesA + kTileBytesB;
        mbar_arrive_expect_tx(&sm.full[s], tx);
        tma_load_2d(sm.a[s], a_map, it * BK, m0, &sm.full[s]);
        tma_load_2d(sm.b[s], b_map, it * BK, n0, &sm.full[s]);
      }
    }
    return;
  }

  // Consumer warpgroup.
  float d[32];
#pragma unroll
  for (int i = 0; i < 32; ++i) d[i] = 0.f;
  for (int it = 0; it < kiters; ++it) {
    const int s = it % STAGES;
    const uint32_t visit = it / STAGES;
    if (!(V & kNoFullWait)) mbar_wait(&sm.full[s], (V & kPhaseNoMod2) ? visit : (visit & 1));
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    const uint32_t a_base = smem_addr(sm.a[s]), b_base = smem_addr(sm.b[s]);
#pragma unroll
    for (int kk = 0; kk < BK / 16; ++kk)  // 16 halves = 32 bytes along K inside the swizzled row
      wgmma_m64n64k16(d, smem_desc_k_sw128(a_base + kk * 32), smem_desc_k_sw128(b_base + kk * 32));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
    if (!(V & kConsumerNoRelease)) mbar_arrive(&sm.empty[s]);
  }

  // The accumulator fragment of m64nNk16: warp w holds rows 16w..16w+15;
  // register 4j + 2h + e is row 16w + lane/4 + 8h, column 8j + 2(lane%4) + e.
  const int warp = tid / 32, lane = tid % 32;
  if (!(V & kTmaStore)) {
#pragma unroll
    for (int j = 0; j < BN / 8; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        const int row = m0 + 16 * warp + lane / 4 + 8 * h, col = n0 + 8 * j + 2 * (lane % 4);
        if (row < M && col < N)
          *reinterpret_cast<float2*>(&C[row * N + col]) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
      }
    return;
  }

  // TMA-store epilogue: the 64 x 64 f32 tile (16 KB) goes to shared memory,
  // row-major, over the A stages (every load has landed and every wgmma has
  // completed by now), then one thread stores it with the tensor map of C.
  float* tile = reinterpret_cast<float*>(sm.a);
#pragma unroll
  for (int j = 0; j < BN / 8; ++j)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int r = 16 * warp + lane / 4 + 8 * h, c = 8 * j + 2 * (lane % 4);
      *reinterpret_cast<float2*>(&tile[r * BN + c]) = make_float2(d[4 * j + 2 * h], d[4 * j + 2 * h + 1]);
    }
  // The TMA store reads the tile through the async proxy: each writing
  // thread orders its generic-proxy stores before it, then the consumers
  // meet at a named barrier (barrier 1, the 128 consumer threads only).
  if (!(V & kStoreNoProxyFence)) asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  asm volatile("bar.sync 1, 128;" ::: "memory");
  if (tid == 0) tma_store_2d(c_map, n0, m0, tile);
}

}  // namespace hopper_gemm
