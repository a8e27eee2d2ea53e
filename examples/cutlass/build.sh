#!/bin/sh
# How the PTX here was made (not run by the tests): a CUTLASS checkout at
# commit 7107b0553 in $CUTLASS, nvcc 13.
set -eu
: "${CUTLASS:?set CUTLASS to a checkout of NVIDIA/cutlass}"
nvcc -ptx -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -I "$CUTLASS/include" -I "$CUTLASS/tools/util/include" \
  "$CUTLASS/examples/cute/tutorial/hopper/wgmma_tma_sm90.cu" -o wgmma_tma_sm90.ptx
# The planted bug: each stage's expect_tx announces half the bytes.
awk '/mov.u32.*, 32768;/ && n < 2 && NR < 3917 { sub(/32768;/, "16384;"); n++ } { print }' wgmma_tma_sm90.ptx > wgmma_tma_sm90_expect_tx.ptx
nvcc -arch=sm_90a -ptx -O3 ref.cu -o ref.ptx

# --- CuTe tutorial variants and planted bugs (the "cute" section) ---
# A dropped consumer release: the consumers' mbarrier.arrive on
# mma_barrier[read_pipe] (ConsumerBarType::arrive, the only arrive on
# %r1177) deleted from the NT kernel.
sed '/mbarrier.arrive.shared::cta.b64 _, \[%r1177\];/d' wgmma_tma_sm90.ptx > wgmma_tma_sm90_no_release.ptx
# The TN kernel of wgmma_tma_sm90.cu is the second .entry of wgmma_tma_sm90.ptx
# (gemm_tn_ref in ref.cu is its reference). The tutorial without TMA:
nvcc -ptx -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr -I "$CUTLASS/include" -I "$CUTLASS/tools/util/include" \
  "$CUTLASS/examples/cute/tutorial/hopper/wgmma_sm90.cu" -o wgmma_sm90.ptx
# Its planted bug: the NT main loop's cp_async_wait<0>() (the file's first cp.async.wait_all) deleted.
awk '/cp.async.wait_all;/ && !n { n = 1; next } { print }' wgmma_sm90.ptx > wgmma_sm90_no_wait.ptx
# A parity flip: the consumers' read_state.phase() starts at 1 (its register, %r1494, initialised to 1).
sed 's/^\tmov.u32 \t%r1494, %r1428;$/\tmov.u32 \t%r1494, 1;/' wgmma_tma_sm90.ptx > wgmma_tma_sm90_parity.ptx

# ---- sm80 section: CuTe's Ampere tutorial (sgemm_sm80.cu, its half_t TN kernel) ----
nvcc -ptx -O3 -std=c++17 -arch=sm_80 --expt-relaxed-constexpr -I "$CUTLASS/include" -I "$CUTLASS/tools/util/include" \
  "$CUTLASS/examples/cute/tutorial/sgemm_sm80.cu" -o sgemm_sm80.ptx
# The planted bug: the main loop's cp.async.wait_group 1 (the second in the
# file; the first is the prologue's) becomes wait_group 2.
awk '/cp.async.wait_group 1;/ { n++; if (n == 2) sub(/wait_group 1;/, "wait_group 2;") } { print }' \
  sgemm_sm80.ptx > sgemm_sm80_wait_group.ptx

# ---- sm80 section: CUTLASS's example 14 (tf32 tensor cores, device::Gemm) ----
# Compiled unedited. params_sm80.cu (host code) includes the example (its main
# renamed) and prints the kernel's Params as the spec's "struct", at the
# offsets this compiler gives them: the spec holds its output for 256 256 64 1 0.
CUTLASS_FLAGS="-std=c++17 -arch=sm_80 --expt-relaxed-constexpr -I $CUTLASS/include -I $CUTLASS/tools/util/include -I $CUTLASS/examples/common"
nvcc -ptx -O3 $CUTLASS_FLAGS "$CUTLASS/examples/14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu" \
  -o ampere_tf32_tensorop_gemm.ptx
nvcc -O1 $CUTLASS_FLAGS -I "$CUTLASS/examples" \
  -DGEMM_SOURCE='"14_ampere_tf32_tensorop_gemm/ampere_tf32_tensorop_gemm.cu"' params_sm80.cu -o params_sm80
./params_sm80 256 256 64 1 0
# Its planted bug: the main loop's cp.async.wait_group 2 (the second) becomes 3.
awk '/cp.async.wait_group 2;/ { n++; if (n == 2) sub(/wait_group 2;/, "wait_group 3;") } { print }' \
  ampere_tf32_tensorop_gemm.ptx > ampere_tf32_tensorop_gemm_wait_group.ptx

# --- CUTLASS example 48 (48_*.json; README.md, "Example 48") ---
# The example is a whole program (host code, reference kernels, random
# fills); it is compiled unedited, and 48_trim.awk keeps its one GEMM kernel
# (cutlass::device_kernel<GemmUniversal<...>>) and the module declarations
# that kernel names. Its only parameter is the 1024-byte Params struct:
# 48_params.cu includes the example's source (main() renamed), builds the
# Params the way GemmUniversalAdapter does (CUTLASS's own types, offsets and
# tile-scheduler code; the TMA descriptors, which need a GPU driver, become
# the spec's "tensor_map" entries at their offsets) and prints it as a spec
# "struct", with the grid, block and shared-memory size; 48_specs.py wraps
# that into a spec against 48_ref.cu. Arguments: M N K SM_COUNT
# MAX_ACTIVE_CLUSTERS (an H200's 132 SMs; one co-resident cluster, so that
# the persistent grid is one 4 x 2 cluster).
tmp=${TMPDIR:-/tmp}
ex48="$CUTLASS/examples/48_hopper_warp_specialized_gemm/48_hopper_warp_specialized_gemm.cu"
inc="-I $CUTLASS/include -I $CUTLASS/tools/util/include -I $CUTLASS/examples/common"
nvcc -ptx -O3 -std=c++17 -arch=sm_90a --expt-relaxed-constexpr $inc "$ex48" -o "$tmp/48_full.ptx"
awk -f 48_trim.awk "$tmp/48_full.ptx" "$tmp/48_full.ptx" > 48_hopper_warp_specialized_gemm.ptx
nvcc -std=c++17 -arch=sm_90a --expt-relaxed-constexpr $inc -DEX48="\"$ex48\"" 48_params.cu -o "$tmp/48_params"
nvcc -arch=sm_90a -ptx -O3 48_ref.cu -o 48_ref.ptx
B=48_hopper_warp_specialized_gemm
# The planted bugs, one edit of the PTX each:
# each stage's expect_tx announces half of Params' tma_transaction_bytes;
sed 's/^\tmbarrier.arrive.expect_tx.shared::cta.b64 _, \[%r938\], %r11; $/\t.reg .b32 %rhalf; shr.u32 %rhalf, %r11, 1; mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r938], %rhalf;/' \
  $B.ptx > ${B}_expect_tx.ptx
# the consumers' release of the last stage (mma_tail: the second remote
# arrive on an empty barrier) is dropped;
awk '/mbarrier.arrive.shared::cluster.b64  _, \[remAddr32\];/ && ++n == 2 { next } { print }' $B.ptx > ${B}_no_release.ptx
# the consumers' release of the previous stage in the mainloop (the first)
# is dropped: it shows only once the pipeline wraps around;
awk '/mbarrier.arrive.shared::cluster.b64  _, \[remAddr32\];/ && !n { n = 1; next } { print }' $B.ptx > ${B}_no_release_mainloop.ptx
# the consumers' pipeline state starts at phase 1 instead of 0 (their waits
# on the full barriers look for the other parity).
sed 's/^\tmov.u32 \t%r1058, %r283;$/\txor.b32 \t%r1058, %r283, 1;/' $B.ptx > ${B}_parity.ptx
# The specs (48_specs.py: NAME PTX EXPECT DESCRIPTION).
what="CUTLASS example 48 (NVIDIA/cutlass 7107b0553, examples/48_hopper_warp_specialized_gemm, unedited): TF32 GEMM D = alpha*A*B + beta*C, f32 in and out, A row-major, B and C/D column-major; KernelTmaWarpSpecializedCooperative (384 threads: a producer warpgroup, two consumer warpgroups), 128x128x32 tiles, 7-stage TMA pipeline, cluster 4x2 with multicast, persistent tile scheduler"
"$tmp/48_params" 512 256 32 132 1 | python3 48_specs.py 48_gemm.json $B.ptx equivalent \
  "$what; against a naive GEMM over every CTA at M = 512, N = 256, K = 32, alpha 1.5, beta 0.5"
"$tmp/48_params" 512 256 64 132 1 | python3 48_specs.py 48_gemm_k64.json $B.ptx - \
  "$what; against a naive GEMM over every CTA at M = 512, N = 256, K = 64 (two k-tiles: the mainloop's release), alpha 1.5, beta 0.5; equivalent, not run by CTest (4.8 GB)"
"$tmp/48_params" 512 256 32 132 1 | python3 48_specs.py 48_expect_tx.json ${B}_expect_tx.ptx race \
  "$what; each stage's expect_tx announces half the bytes: the phase completes while copies are in flight"
"$tmp/48_params" 512 256 32 132 1 | python3 48_specs.py 48_parity.json ${B}_parity.ptx race \
  "$what; the consumers wait on the full barriers with the phase parity flipped: they pass before the copies land"
"$tmp/48_params" 512 256 32 132 1 | python3 48_specs.py 48_no_release.json ${B}_no_release.ptx deadlock \
  "$what; the consumers' release of the last stage (mma_tail) is dropped: the producer's load_tail waits forever for that stage's empty barrier"
"$tmp/48_params" 128 128 256 132 1 | python3 48_specs.py 48_no_release_mainloop.json ${B}_no_release_mainloop.ptx - \
  "$what; the consumers no longer release a stage in the mainloop: the producer waits forever to refill stage 0 (K = 256 is 8 k-tiles for 7 stages); not run by CTest (9 GB)"
