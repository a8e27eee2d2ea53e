#!/usr/bin/env python3
"""Writes the spec files of the Hopper examples (one per variant of
gemm_sm90.cuh): the naive reference gemm_ref against the variant, over the
whole grid, with the verdict each bug deserves.

    python3 examples/hopper/make_specs.py
"""
import json
import os
import re

HERE = os.path.dirname(os.path.abspath(__file__))
M, N, K = 128, 128, 384

TENSORS = [
    {"name": "A", "dtype": "f16", "shape": [M, K], "role": "in"},
    {"name": "B", "dtype": "f16", "shape": [N, K], "role": "in"},
    {"name": "C", "dtype": "f32", "shape": [M, N], "role": "out"},
    {"name": "M", "dtype": "s32", "value": M},
    {"name": "N", "dtype": "s32", "value": N},
    {"name": "K", "dtype": "s32", "value": K},
    # Tensor maps as run_h100.cu encodes them: dims innermost first (K, rows),
    # a 64 x 64 box, the 128-byte swizzle the wgmma descriptors assume.
    {"name": "a_map", "tensor_map": {"tensor": "A", "box": [64, 64], "swizzle": "128B"}},
    {"name": "b_map", "tensor_map": {"tensor": "B", "box": [64, 64], "swizzle": "128B"}},
]
C_MAP = {"name": "c_map", "tensor_map": {"tensor": "C", "box": [64, 64], "swizzle": "none"}}

COMMON = ("C[M,N] f32 = A[M,K] f16 * B[N,K]^T f16 (both K-major), M = N = 128, K = 384; gemm_ref (ref_gemm.cu, one "
          "thread per element) against {kernel} (gemm_sm90.cuh): one 64 x 64 tile per CTA, 128 consumer threads "
          "(one warpgroup: wgmma.m64n64k16 from 128B-swizzled shared-memory descriptors) + 1 producer warp (an "
          "elect.sync'd lane issues the TMA loads), 2 stages filled 3 times each (phases 0, 1, 2 of every "
          "mbarrier). ")

VARIANTS = {
    "tma_gemm": ("tma_gemm", [2, 2, 1], "equivalent",
                 "Correct: full[s] armed with expect_tx of both tiles' bytes, waited with parity visit % 2; every "
                 "consumer thread arrives on empty[s] after wgmma.wait_group 0; the producer waits on empty[s] with "
                 "parity (visit % 2) ^ 1 (a fresh barrier's preceding phase counts as complete). Epilogue: "
                 "st.global of the accumulator fragment. H100: OK."),
    "tma_gemm_store": ("tma_gemm_store", [2, 2, 1], "equivalent",
                       "Correct, with a TMA-store epilogue: the tile is written to shared memory (over the A "
                       "stages) with st.shared, each thread runs fence.proxy.async.shared::cta, the consumers meet "
                       "at bar.sync 1, 128, and one thread stores the tile with "
                       "cp.async.bulk.tensor.2d.global.shared::cta.bulk_group + commit_group + wait_group.read 0. "
                       "H100: OK."),
    "phase_no_mod2": ("tma_gemm_phase_no_mod2", [2, 2, 1], "equivalent",
                      "Bug, latent: the consumer waits on full[s] with parity = the stage's visit count (0, 1, 2) "
                      "instead of visit % 2. The PTX ISA says the valid values of phaseParity are 0 and 1; an H200 "
                      "(driver 580) uses bit 0: the result is exact and racecheck reports nothing. tileverify runs "
                      "it as the GPU does (bit 0), so the outputs are the reference's (equivalent), and reports "
                      "the out-of-range operand in a note at the wait."),
    "consumer_no_release": ("tma_gemm_consumer_no_release", [2, 2, 1], "deadlock",
                            "Bug: the consumer never arrives on empty[s], so the producer's wait for the second "
                            "fill of stage 0 (parity 0 on empty[0]) never completes, and the consumer waits on "
                            "full[0] for data that is never loaded: deadlock. An H200 hangs (killed after 20 s)."),
    "tx_too_small": ("tma_gemm_tx_too_small", [2, 2, 1], "race",
                     "Bug: arrive.expect_tx on full[s] counts the bytes of the A tile only, so the phase can "
                     "complete when A has landed and before B's TMA load has written the B tile that wgmma then "
                     "reads: the read of B's stage is not ordered after the TMA write (race). On an H200 it hangs: B's "
                     "bytes complete_tx in the next phase, whose tx-count goes negative, so that phase completes at "
                     "the producer's next arrive, and by the third fill the tx-count never returns to 0 (the race "
                     "comes first, at the first fill)."),
    "no_full_wait": ("tma_gemm_no_full_wait", [2, 2, 1], "race",
                     "Bug: the consumer never waits on full[s]: wgmma reads each stage while the TMA loads into "
                     "it may still be in flight (race). An H200 ends the launch with cudaErrorLaunchFailure "
                     "(unspecified launch failure; likely because the consumers finish and the CTA exits with TMA loads into "
                     "its shared memory in flight); synccheck: \"Barrier error detected. Missing wait\"."),
    "stray_cta": ("tma_gemm", [3, 2, 1], "equivalent",
                  "Launch with one CTA column too many, correct kernel: grid.x = M/64 + 1, so the CTAs of the last "
                  "column (blockIdx.x = 2, m0 = 128) issue TMA loads of A at row 128, a box wholly outside A's 128 "
                  "rows; their epilogue stores are masked by row < M, so they own no output. The PTX ISA fills a "
                  "tile-mode load's out-of-bound elements (zeros here) and counts the whole box's bytes, and an "
                  "H200 (driver 580) does so: no error, C exact, memcheck and racecheck clean (as "
                  "tools/gpu_checks/tma_bounds.cu found for single loads). So the outputs are those of the "
                  "reference: equivalent. The launch that traps is stray_cta_store's."),
    "store_no_proxy_fence": ("tma_gemm_store_no_proxy_fence", [2, 2, 1], "race",
                             "Bug: the TMA-store epilogue writes the tile with st.shared and issues the TMA store "
                             "after bar.sync but without fence.proxy.async.shared::cta: the async proxy's read of "
                             "the tile is not ordered after the generic-proxy writes (race). An H200 stores a "
                             "stale tile: C differs in about 2500 of 16384 elements; racecheck sees nothing."),
    "tma_gemm_store_rev": ("tma_gemm_store_rev", [2, 2, 1], "equivalent",
                           "Correct: the TMA-store kernel with the tiles of M walked from the end, m0 = (M/64 - 1 - "
                           "blockIdx.x) * 64 (the tile derived from M, not from the grid). H200: OK."),
    "stray_cta_store": ("tma_gemm_store_rev", [3, 2, 1], "launch_contract",
                        "Launch bug: tma_gemm_store_rev (tiles from the end) launched with grid.x = M/64 + 1. The "
                        "stray CTAs (blockIdx.x = 2) get m0 = -64: their TMA loads of A at row -64 read zeros, and "
                        "their TMA store of C at row -64, a box wholly outside C at a negative coordinate, traps on "
                        "the GPU (tools/gpu_checks/tma_bounds.cu: a TMA store at any negative coordinate is error "
                        "715, illegal instruction). An H200 ends the launch with cudaErrorIllegalInstruction (715); "
                        "memcheck names it, racecheck and synccheck report nothing."),
}

# 2-CTA clusters (gemm_cluster.cuh): A's box is 32 rows (each CTA multicasts
# half of the A tile). A run of tileverify holds both CTAs of a cluster.
CLUSTER_COMMON = ("2-CTA cluster GEMM (gemm_cluster.cuh), same sizes and tiles as tma_gemm: the CTAs of a cluster "
                  "share the 64-row block of A; each loads 32 rows of it with a TMA multicast to both CTAs (ctaMask "
                  "0b11) and its own B tile; full[s] expects A + B bytes; every consumer warp arrives on empty[s] in "
                  "both CTAs (mapa + mbarrier.arrive.release.cluster), so empty[s] counts 8; cluster barriers after "
                  "the barriers' init and before exit. ")
CLUSTER = {
    "cluster_gemm": ("cluster_gemm", [1, 2, 1], "equivalent",
                     "Correct. H100 and H200: OK, racecheck/synccheck/memcheck clean."),
    "cluster_tx_not_doubled": ("cluster_gemm_tx_not_doubled", [1, 2, 1], "race",
                               "Bug: expect_tx counts the half of A this CTA loads plus B, not the peer's multicast "
                               "half, so the tx-count runs 4096 bytes short of what lands each fill: a phase can "
                               "complete before the peer's half arrives, and wgmma reads it unordered (race). H100 "
                               "and H200: hang (killed after 20 s): the surplus bytes drive the tx-count of the next "
                               "phase negative, which never returns to 0."),
    "cluster_diff_coords": ("cluster_gemm", [2, 1, 1], "not_equivalent",
                            "Launch bug: the kernel is launched with clusters (2, 1, 1), so the two CTAs of a "
                            "cluster have different 64-row blocks of A, and each receives half of its A tile from "
                            "the other's rows (not_equivalent). H100 and H200: WRONG, 8170 of 16384 elements "
                            "differ; the sanitizers report nothing."),
    "cluster_local_count": ("cluster_gemm_local_count", [1, 2, 1], "race",
                            "Bug: empty[s] is initialized with 4 (the local consumer warps) while 8 arrivals come "
                            "(the peer's 4 remote ones too): each fill completes two phases of empty[s], so the "
                            "producer may refill a stage the peer still reads, and the parity waits lose track "
                            "(race: two fills of a stage of the peer, unordered). H100 and H200: hang (killed "
                            "after 20 s)."),
    "cluster_tail_drain": ("cluster_gemm_tail_drain", [1, 2, 1], "deadlock",
                           "Bug: the consumers leave the last 2 fills unreleased (nothing refills them), but the "
                           "producer still drains the pipeline at the end, waiting on empty[s] for them (the sm90 "
                           "producer_tail in 2-CTA mode): the producer waits for arrivals that never come, the "
                           "consumers wait at the final cluster barrier for the producer (deadlock, with the "
                           "cycle). H100: hangs (killed after 20 s)."),
    "cluster_local_release": ("cluster_gemm_local_release", [1, 2, 1], "deadlock",
                              "Bug: the consumers release stage s in their own CTA only, while empty[s] counts the "
                              "peer's 4 remote arrivals too (a release that never reaches the peer's barrier): the "
                              "second fill of each stage waits forever (deadlock: 4 of 8 arrivals in, naming the "
                              "threads that arrived). H100: hangs (killed after 20 s)."),
}


def compact_json(obj):
    text = json.dumps(obj, indent=2)
    return re.sub(r"\[\s*([^\[\]{}]*?)\s*\]", lambda m: "[" + re.sub(r",\s+", ", ", m.group(1)) + "]", text) + "\n"


def write(stem):
    cluster = stem in CLUSTER
    if cluster:
        kernel, cluster_dims, expect, desc = CLUSTER[stem]
        grid = [2, 2, 1]
        desc = CLUSTER_COMMON + desc
    else:
        kernel, grid, expect, desc = VARIANTS[stem]
        desc = COMMON.format(kernel=kernel) + desc
    store = "store" in kernel
    params = [dict(p) for p in TENSORS] + ([C_MAP] if store else [])
    if cluster:
        params[6] = {"name": "a_map", "tensor_map": {"tensor": "A", "box": [64, 32], "swizzle": "128B"}}
    spec = {
        "description": desc,
        "ref": {"ptx": "ref_gemm.ptx", "kernel": "gemm_ref", "block": [16, 16, 1], "grid": [N // 16, M // 16, 1],
                "args": ["A", "B", "C", "M", "N", "K"]},
        "opt": {"ptx": kernel + ".ptx", "kernel": kernel, "block": [160, 1, 1], "grid": grid,
                "args": ["a_map", "b_map", "c_map" if store else "C", "M", "N", "K"]},
        "grid": grid,
        "ctas": "all",
        "params": params,
    }
    if cluster:  # the variant's launch only: the reference is no cluster kernel
        spec["opt"]["cluster"] = cluster_dims
    if expect:
        spec["expect"] = expect
    with open(os.path.join(HERE, stem + ".json"), "w") as f:
        f.write(compact_json(spec))


if __name__ == "__main__":
    for stem in list(VARIANTS) + list(CLUSTER):
        write(stem)
