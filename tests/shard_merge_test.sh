#!/bin/sh
# A sharded check on one machine, as CI runs it: the 4 shards of one whole-grid
# example (--shard I/4 --json), then `tileverify merge` of their reports.
# Checks the merged verdict and exit code of an equivalent pair and of a pair
# that differs in one CTA, and that a missing shard leaves the check unknown.
set -u
cli=$1
examples=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail=0
shards() {  # spec name extra-args...
  spec=$1
  name=$2
  shift 2
  for i in 0 1 2 3; do
    "$cli" equiv --json --quiet --shard "$i/4" "$@" "$spec" > "$dir/$name.$i.json"
  done
}
expect() {  # what rc pattern files...
  what=$1
  rc_want=$2
  pattern=$3
  shift 3
  out=$("$cli" merge "$@")
  rc=$?
  if [ "$rc" -ne "$rc_want" ] || ! printf '%s\n' "$out" | grep -q "$pattern"; then
    echo "FAIL $what: exit $rc (want $rc_want), output:"
    printf '%s\n' "$out"
    fail=1
  else
    echo "ok   $what: $(printf '%s\n' "$out" | head -n 1)"
  fi
}
shards "$examples/scaling/smem32.sizes.json" smem32 --size M=100 --size N=100 --size K=40
expect "4 shards of the 32x32 tiled GEMM at 100x100x40" 0 "^EQUIVALENT (4 of 4 shards" "$dir"/smem32.*.json
expect "3 of its 4 shards" 3 "^UNKNOWN (3 of 4 shards" "$dir/smem32.0.json" "$dir/smem32.1.json" "$dir/smem32.3.json"
shards "$examples/grid/cta7.sizes.json" cta7
expect "4 shards of the GEMM whose CTA 7 alone is wrong" 1 "first differing output: C\[" "$dir"/cta7.*.json
expect "shards of two different checks" 4 "reports of different checks" "$dir/smem32.0.json" "$dir/cta7.1.json"
# One spec, different commands or options: different checks too (issue 31:
# a `check` shard 0 done whole and an `equiv` shard 1 that found a difference
# merged to OK).
vadd=$examples/../triton/sm80/vadd_offbyone.sizes.json
"$cli" check --json --quiet --shard 0/2 "$vadd" > "$dir/vadd.check.0.json"
"$cli" equiv --json --quiet --shard 1/2 "$vadd" > "$dir/vadd.equiv.1.json"
expect "a check shard and an equiv shard of one spec" 4 'shard.check.command "equiv", but' \
  "$dir/vadd.check.0.json" "$dir/vadd.equiv.1.json"
"$cli" equiv --json --quiet --strict --shard 1/4 "$examples/scaling/smem32.sizes.json" --size M=100 --size N=100 \
  --size K=40 > "$dir/smem32.strict.1.json"
expect "a shard run with --strict among shards run without" 4 'shard.check.strict "true", but' \
  "$dir/smem32.0.json" "$dir/smem32.strict.1.json" "$dir/smem32.2.json" "$dir/smem32.3.json"
exit $fail
