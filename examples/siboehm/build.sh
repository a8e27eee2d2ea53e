#!/bin/sh
# How the PTX here was made (not run by the tests): a checkout of
# github.com/siboehm/SGEMM_CUDA at commit 60cba6f9b20a198116c76f18de8047f44df8c8b8
# in $SGEMM_CUDA, nvcc 13, its Release flags (-O3), for sm_80, with -lineinfo
# so that reports name the kernels' source lines. instances.cu includes the
# kernels' headers unedited from $SGEMM_CUDA/src/kernels.
set -eu
: "${SGEMM_CUDA:?set SGEMM_CUDA to a checkout of siboehm/SGEMM_CUDA}"
nvcc -ptx -O3 -lineinfo -arch=sm_80 -w -I "$SGEMM_CUDA/src/kernels" instances.cu -o instances.ptx
