#!/bin/sh
# Does --timeout T hold? Runs `tileverify CMD --timeout T` on every spec of
# examples/kernels and on the slow cases of tests/cases (an endless loop, a
# case split the decider cannot finish, a grid of 2^31 CTAs) for each T
# given, and reports the longest wall time against the promise
# max(1.1 T, T + 1 s). Exits 1 if any run breaks it.
#   bench/timeouts.sh build/src/tileverify "1 5 30" [equiv|check|fpsan ...]
set -u
cli=$1
limits=${2:-"1 5 30"}
shift 2 2>/dev/null || shift $#
cmds=${*:-"equiv check fpsan"}
root=$(cd "$(dirname "$0")/.." && pwd)
specs="$root/examples/kernels/*/*.json $root/tests/cases/limits_endless.json $root/tests/cases/limits_huge_grid.json \
$root/tests/cases/rounded_scale/scale.json $root/tests/cases/rounded_scale/attn.json \
$root/tests/cases/rounded_scale/attn_d128_off3.json"
broken=0
now() { date +%s.%N; }
for cmd in $cmds; do
  for t in $limits; do
    worst=0
    worst_spec=""
    n=0
    for spec in $specs; do
      [ -f "$spec" ] || continue
      start=$(now)
      "$cli" "$cmd" "$spec" --timeout "$t" --quiet >/dev/null 2>&1
      code=$?
      took=$(awk -v a="$(now)" -v b="$start" 'BEGIN { printf "%.3f", a - b }')
      n=$((n + 1))
      if [ "$code" -gt 4 ]; then
        echo "CRASH $cmd --timeout $t $spec: exit $code"
        broken=1
      fi
      if awk -v a="$took" -v b="$worst" 'BEGIN { exit !(a > b) }'; then
        worst=$took
        worst_spec=$spec
      fi
      bound=$(awk -v t="$t" 'BEGIN { b = t * 1.1; c = t + 1; printf "%.2f", (b > c ? b : c) }')
      if awk -v a="$took" -v b="$bound" 'BEGIN { exit !(a > b) }'; then
        echo "OVER  $cmd --timeout $t $spec: $took s (bound $bound s)"
        broken=1
      fi
    done
    printf '%-6s --timeout %-3s %3d specs, longest %.2f s (%s)\n' "$cmd" "$t" "$n" "$worst" "${worst_spec#$root/}"
  done
done
exit $broken
