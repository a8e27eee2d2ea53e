#!/bin/sh
# How the PTX here was made (not run by the tests): a checkout of
# github.com/tspeterkim/flash-attention-minimal at commit
# 00f8f46712d493665c900c32fa3a261c8ef3e20c in $FLASH_MINIMAL, nvcc 13.
# trim.awk copies flash.cu's kernel, unedited, without the PyTorch host code
# (which needs torch's headers); kernel.cu includes it.
set -eu
: "${FLASH_MINIMAL:?set FLASH_MINIMAL to a checkout of tspeterkim/flash-attention-minimal}"
awk -f trim.awk "$FLASH_MINIMAL/flash.cu" > flash_kernel.inc
nvcc -ptx -O3 -lineinfo -arch=sm_80 kernel.cu -o flash.ptx
rm flash_kernel.inc
nvcc -ptx -O3 -lineinfo -arch=sm_80 ref.cu -o ref.ptx
# A planted bug: the old output is no longer rescaled by exp(m_prev - m_new)
# when a later key tile raises the row max (the missing rescale of an online
# softmax).
awk -f trim.awk "$FLASH_MINIMAL/flash.cu" | sed 's/row_l_prev \* __expf(row_m_prev - row_m_new) \* O/row_l_prev * O/' > flash_kernel.inc
nvcc -ptx -O3 -lineinfo -arch=sm_80 kernel.cu -o flash_norescale.ptx
rm flash_kernel.inc
