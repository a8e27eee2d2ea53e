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

# ---- sm80 section: CuTe's Ampere tutorial (sgemm_sm80.cu, its half_t TN kernel) ----
nvcc -ptx -O3 -std=c++17 -arch=sm_80 --expt-relaxed-constexpr -I "$CUTLASS/include" -I "$CUTLASS/tools/util/include" \
  "$CUTLASS/examples/cute/tutorial/sgemm_sm80.cu" -o sgemm_sm80.ptx
# The planted bug: the main loop's cp.async.wait_group 1 (the second in the
# file; the first is the prologue's) becomes wait_group 2.
awk '/cp.async.wait_group 1;/ { n++; if (n == 2) sub(/wait_group 1;/, "wait_group 2;") } { print }' \
  sgemm_sm80.ptx > sgemm_sm80_wait_group.ptx
