#!/usr/bin/env bash
# Runs `tileverify test` (differential runs on the GPU) on every example
# spec with an "expect" and prints, per spec, the proof's expected verdict
# beside what the GPU run found: which broken kernels a differential test
# finds, which only the proof finds, and which float hazards only the GPU
# shows. Needs a CUDA GPU.
#
#   tools/gpu_checks/differential_examples.sh [TILEVERIFY] [DIR ...]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tv=${1:-$root/build/src/tileverify}
shift || true
dirs=("$@")
[ ${#dirs[@]} -gt 0 ] || dirs=("$root"/examples/kernels/* "$root"/examples/triton/sm80 "$root"/examples/hopper)
printf '%-48s %-16s %-8s %s\n' spec expect test "first line"
for d in "${dirs[@]}"; do
  for spec in "$d"/*.json; do
    expect=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(j.get('expect','') if 'opt' in j else '')" "$spec" 2>/dev/null)
    [ -n "$expect" ] || continue
    out=$(timeout -k 5 300 "$tv" test "$spec" 2>&1); rc=$?
    [ $rc -eq 124 ] || [ $rc -eq 137 ] && out="HANG: killed after 300 s"
    printf '%-48s %-16s %-8s %s\n' "${spec#$root/examples/}" "$expect" "$rc" "$(echo "$out" | head -1 | cut -c1-160)"
  done
done
