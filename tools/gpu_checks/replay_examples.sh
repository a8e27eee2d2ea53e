#!/usr/bin/env bash
# Runs `tileverify equiv --gpu` on every example spec that expects
# not_equivalent and prints the replay line: the counterexample's inputs run
# in float on the GPU, and whether the two kernels' outputs differ there too.
#
#   tools/gpu_checks/replay_examples.sh [TILEVERIFY]
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
tv=${1:-$root/build/src/tileverify}
for spec in "$root"/examples/kernels/*/*.json "$root"/examples/triton/sm80/*.json "$root"/examples/hopper/*.json; do
  expect=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('expect',''))" "$spec" 2>/dev/null)
  [ "$expect" = not_equivalent ] || continue
  out=$(timeout -k 5 300 "$tv" equiv --gpu --quiet "$spec" 2>&1)
  printf '%-44s %s | %s\n' "${spec#$root/examples/}" "$(echo "$out" | head -1)" \
    "$(echo "$out" | grep -E 'on the GPU' | head -1 | sed 's/^ *//')"
done
