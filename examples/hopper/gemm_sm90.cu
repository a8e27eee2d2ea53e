// The kernels of the Hopper examples: one extern "C" entry per variant of
// gemm_sm90.cuh. run_h100.sh compiles each to its own PTX file with
// -DONE_VARIANT=<number below>; run_h100.cu includes this file whole.
#include "gemm_sm90.cuh"
#include "gemm_cluster.cuh"

#ifndef ONE_VARIANT
#define WANT(n) 1
#else
#define WANT(n) (ONE_VARIANT == (n))
#endif

// C written by st.global from the accumulator registers.
#define GEMM_KERNEL(name, V)                                                                         \
  extern "C" __global__ void __launch_bounds__(hopper_gemm::kThreads, 1)                            \
      name(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,    \
           float* C, int M, int N, int K) {                                                          \
    hopper_gemm::gemm_body<V>(&a_map, &b_map, C, nullptr, M, N, K);                                  \
  }
// C written by a TMA store through c_map.
#define GEMM_STORE_KERNEL(name, V)                                                                   \
  extern "C" __global__ void __launch_bounds__(hopper_gemm::kThreads, 1)                            \
      name(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,    \
           const __grid_constant__ CUtensorMap c_map, int M, int N, int K) {                         \
    hopper_gemm::gemm_body<V>(&a_map, &b_map, nullptr, &c_map, M, N, K);                             \
  }

// A 2-CTA cluster kernel (gemm_cluster.cuh); the launch gives the cluster
// shape (cudaLaunchKernelEx), so that a wrong shape is a launch bug.
#define GEMM_CLUSTER_KERNEL(name, V)                                                                 \
  extern "C" __global__ void __launch_bounds__(hopper_gemm::kThreads, 1)                            \
      name(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,    \
           float* C, int M, int N, int K) {                                                          \
    hopper_gemm::gemm_cluster_body<V>(&a_map, &b_map, C, M, N, K);                                   \
  }

using namespace hopper_gemm;
#if WANT(0)
GEMM_KERNEL(tma_gemm, 0)
#endif
#if WANT(1)
GEMM_STORE_KERNEL(tma_gemm_store, kTmaStore)
#endif
#if WANT(2)
GEMM_KERNEL(tma_gemm_phase_no_mod2, kPhaseNoMod2)
#endif
#if WANT(3)
GEMM_KERNEL(tma_gemm_consumer_no_release, kConsumerNoRelease)
#endif
#if WANT(4)
GEMM_KERNEL(tma_gemm_tx_too_small, kTxTooSmall)
#endif
#if WANT(5)
GEMM_KERNEL(tma_gemm_no_full_wait, kNoFullWait)
#endif
#if WANT(6)
GEMM_STORE_KERNEL(tma_gemm_store_no_proxy_fence, kTmaStore | kStoreNoProxyFence)
#endif
#if WANT(7)
GEMM_STORE_KERNEL(tma_gemm_store_rev, kTmaStore | kReverseTiles)
#endif
#if WANT(8)
GEMM_CLUSTER_KERNEL(cluster_gemm, 0)
#endif
#if WANT(9)
GEMM_CLUSTER_KERNEL(cluster_gemm_tx_not_doubled, kClusterTxNotDoubled)
#endif
#if WANT(10)
GEMM_CLUSTER_KERNEL(cluster_gemm_local_count, kClusterLocalCount)
#endif
#if WANT(11)
GEMM_CLUSTER_KERNEL(cluster_gemm_tail_drain, kClusterTailDrain)
#endif
#if WANT(12)
GEMM_CLUSTER_KERNEL(cluster_gemm_local_release, kClusterLocalRelease)
#endif
