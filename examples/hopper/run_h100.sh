#!/usr/bin/env bash
# Builds the Hopper examples and runs every variant on the GPU (an H100 or
# another sm_90 part), each as its own process under a timeout, then under
# compute-sanitizer. Writes h100_results.txt beside this script (or to $1).
#
#   examples/hopper/run_h100.sh [RESULTS_FILE]    # on a machine with an sm_90 GPU
#   examples/hopper/run_h100.sh --ptx             # only regenerate the PTX (no GPU needed)
#
# The PTX files are checked in; --ptx rewrites them with the nvcc on PATH
# (or $NVCC), with -lineinfo so that reports name source lines.
set -u
cd "$(dirname "$0")"
NVCC=${NVCC:-nvcc}
command -v "$NVCC" >/dev/null || NVCC=/usr/local/cuda/bin/nvcc
# -gencode compute_90a: wgmma needs the "a" target (a plain sm_90 pass rejects it).
ARCH="-gencode=arch=compute_90a,code=sm_90a"

ptx() {
  local names=(tma_gemm tma_gemm_store tma_gemm_phase_no_mod2 tma_gemm_consumer_no_release tma_gemm_tx_too_small
               tma_gemm_no_full_wait tma_gemm_store_no_proxy_fence tma_gemm_store_rev
               cluster_gemm cluster_gemm_tx_not_doubled cluster_gemm_local_count cluster_gemm_tail_drain
               cluster_gemm_local_release)
  for i in "${!names[@]}"; do
    "$NVCC" $ARCH -ptx -lineinfo -DONE_VARIANT="$i" gemm_sm90.cu -o "${names[$i]}.ptx" || exit 1
  done
  "$NVCC" $ARCH -ptx -lineinfo ref_gemm.cu -o ref_gemm.ptx || exit 1
}

if [ "${1:-}" = "--ptx" ]; then
  ptx
  exit 0
fi

OUTFILE=${1:-h100_results.txt}
BIN=${BIN:-/tmp/run_h100}
"$NVCC" $ARCH -O2 -lineinfo run_h100.cu -lcuda -o "$BIN" || exit 1

{
  echo "# examples/hopper: every variant on $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
  echo "# $("$NVCC" --version | tail -1); $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "# M = N = 128, K = 384, grid 2 x 2 of 64 x 64 tiles (stray_cta*: 3 x 2), 160 threads a CTA; cluster_*: 2-CTA clusters"
  echo
  echo "## plain runs (timeout 20 s each)"
  hung=" "
  for v in $("$BIN" --list | cut -f1); do
    out=$(timeout -k 5 20 "$BIN" "$v" 2>&1)
    rc=$?
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
      echo "$v: HANG (killed after 20 s)"
      hung="$hung$v "
    else
      echo "$out"
    fi
  done
  if command -v compute-sanitizer >/dev/null; then
    for tool in racecheck synccheck memcheck; do
      echo
      echo "## compute-sanitizer --tool $tool (timeout 30 s each; its summary lines)"
      for v in $("$BIN" --list | cut -f1); do
        case "$hung" in *" $v "*) echo "$v: not run (it hangs without the sanitizer)"; continue ;; esac
        log=$(timeout -k 5 30 compute-sanitizer --tool "$tool" "$BIN" "$v" 2>&1)
        rc=$?
        if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
          echo "$v: HANG under $tool (killed after 30 s)"
          continue
        fi
        # The program's own line, the sanitizer's summary, and the first hazard it names.
        verdict=$(echo "$log" | grep -E "^$v: " | head -1)
        summary=$(echo "$log" | grep -E "ERROR SUMMARY|RACECHECK SUMMARY" | sed 's/^========= //' | tr '\n' ' ')
        first=$(echo "$log" | grep -E "^========= +(Error|Warning|Invalid|Race|Barrier|Program hit|Uninit)" | head -1 |
                sed 's/^========= *//')
        echo "$v: [$verdict] $summary${first:+ | first: $first}"
      done
    done
  fi
} | tee "$OUTFILE"
