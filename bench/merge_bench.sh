#!/bin/sh
# `tileverify merge` of many shard reports: its wall time and peak memory
# (/usr/bin/time -v), for docs/performance.md ("Merging shard reports").
#
#   bench/merge_bench.sh [path/to/tileverify] [SHARDS]
#
# Makes SHARDS (default 1024) real shard reports of one small whole-grid
# check, Triton's vector add against its reference at its default N = 1000
# (examples/triton/sm80/vadd.sizes.json: 2 pairs of CTA classes, 488
# comparisons dealt over the shards, one or none each; `equiv --shard
# I/SHARDS --json`, one process each), then times one merge of them all,
# and a second one with a warm file cache. The reports stay in $KEEP if it
# is set.
set -u
cli=${1:-build/src/tileverify}
n=${2:-1024}
spec=$(dirname "$0")/../examples/triton/sm80/vadd.sizes.json
dir=${KEEP:-$(mktemp -d)}
mkdir -p "$dir"
[ -n "${KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT
start=$(date +%s)
i=0
while [ "$i" -lt "$n" ]; do
  "$cli" equiv --json --quiet --shard "$i/$n" "$spec" > "$dir/shard.$i.json"
  rc=$?
  if [ "$rc" -gt 1 ]; then
    echo "shard $i of $n: exit $rc" >&2
    exit 1
  fi
  i=$((i + 1))
done
echo "made $n shard reports in $(($(date +%s) - start)) s ($(cat "$dir"/shard.*.json | wc -c) bytes)"
for run in 1 2; do
  /usr/bin/time -v "$cli" merge "$dir"/shard.*.json > "$dir/merged.txt" 2> "$dir/time.txt"
  rc=$?
  t=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$dir/time.txt")
  kb=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$dir/time.txt")
  echo "merge run $run: exit $rc, wall $t, max RSS $kb KiB: $(head -n 2 "$dir/merged.txt" | tr '\n' ' ')"
done
