#!/bin/sh
# How the PTX here was made (not run by the tests): a fast.cu checkout
# (github.com/pranjalssh/fast.cu) at commit 38eb642 in $FASTCU, nvcc 13, the
# flags of its Makefile.
set -eu
: "${FASTCU:?set FASTCU to a checkout of pranjalssh/fast.cu}"
nvcc -ptx -std=c++17 -O3 -DNDEBUG -w --expt-relaxed-constexpr --expt-extended-lambda --use_fast_math -lineinfo \
  -arch=sm_90a -I "$FASTCU" matmul_2.cu -o matmul_2.ptx
nvcc -arch=sm_90a -ptx -lineinfo -O3 ref.cu -o ref.ptx
