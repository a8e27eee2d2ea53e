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
