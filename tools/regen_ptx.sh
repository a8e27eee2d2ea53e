#!/usr/bin/env bash
# Regenerates the PTX of the example kernels: for every
# examples/kernels/<family>/<name>.cu, writes <name>.ptx (default flags) and
# <name>.fastmath.ptx (-use_fast_math) beside it.
#
#   NVCC   compiler to use   (default: nvcc on PATH, else /usr/local/cuda/bin/nvcc)
#   ARCH   virtual arch      (default: sm_90; the tensor-core kernels need sm_80+)
#   NVCC_FLAGS extra flags   (default: none; e.g. -lineinfo)
#
# Usage: tools/regen_ptx.sh [file.cu ...]   (no arguments: every example)
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
if [[ -z "${NVCC:-}" ]]; then
    if command -v nvcc >/dev/null 2>&1; then NVCC=nvcc; else NVCC=/usr/local/cuda/bin/nvcc; fi
fi
ARCH=${ARCH:-sm_90}
read -r -a extra <<<"${NVCC_FLAGS:-}"

if [[ $# -gt 0 ]]; then
    sources=("$@")
else
    shopt -s nullglob
    sources=("$root"/examples/kernels/*/*.cu)
fi
[[ ${#sources[@]} -gt 0 ]] || { echo "regen_ptx: no .cu files found" >&2; exit 1; }

"$NVCC" --version | tail -n 2
for cu in "${sources[@]}"; do
    base=${cu%.cu}
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" "${extra[@]}" -ptx "$cu" -o "$base.ptx"
    "$NVCC" -O3 -std=c++17 -arch="$ARCH" "${extra[@]}" -use_fast_math -ptx "$cu" -o "$base.fastmath.ptx"
    printf '%6d %6d  %s\n' "$(wc -l <"$base.ptx")" "$(wc -l <"$base.fastmath.ptx")" "${cu#"$root"/}"
done
