#!/bin/bash
# The table of mbarrier_overshoot.cu's configurations, one process each.
#   tools/gpu_checks/mbarrier_overshoot.sh > tools/gpu_checks/results/mbarrier_overshoot_h200.txt
set -u
cd "$(dirname "$0")"
nvcc -std=c++17 -arch=sm_90 mbarrier_overshoot.cu -o /tmp/mbarrier_overshoot || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
nvcc --version | tail -1
run() { /tmp/mbarrier_overshoot "$@"; }
for c in 0 16 30 31 32 33 64; do for m in converged serial; do run 32 $c $m; done; done
for c in 64 96 97 100 126 127 128 129 160 256; do for m in converged serial; do run 128 $c $m; done; done
run 32 16 partial 16; run 32 16 partial 17; run 32 16 partial 20
run 64 30 partial 20; run 64 40 partial 20; run 64 50 partial 20
run 32 64 count 2; run 32 40 count 2; run 32 63 count 2
run 32 4 single 4; run 32 4 single 5; run 32 1 single 2
exit 0
