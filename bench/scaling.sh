#!/bin/sh
# Whole-grid scaling ("ctas": "all"): the examples/kernels/scaling pairs at
# growing sizes, with CTA classes and without (--no-symmetry), one line per
# run: wall time, peak memory, verdict, and the classes of each kernel
# (and the size-parametric row softmax of examples/kernels/sized).
# docs/performance.md ("Whole grid at real sizes") holds a measured table.
#
#   bench/scaling.sh [path/to/tileverify] [--quick]
#
# --quick: only the sizes that take a few seconds. Without symmetry the
# larger sizes are skipped (past 256 they take minutes and gigabytes; the
# table says what they would need).
set -u
cli=${1:-build/src/tileverify}
quick=${2:-}
dir=$(dirname "$0")/../examples/kernels/scaling
timeout=${TIMEOUT:-600}

run() {  # spec label flags... : one table row
  spec=$1
  label=$2
  shift 2
  out=$( { /usr/bin/time -f "TIME %e %M" "$cli" equiv --json --quiet --timeout "$timeout" "$dir/$spec" "$@"; } 2>&1)
  verdict=$(printf '%s\n' "$out" | sed -n 's/^  "verdict": "\([a-z_]*\)".*/\1/p')
  t=$(printf '%s\n' "$out" | sed -n 's/^TIME \([0-9.]*\) .*/\1/p')
  kb=$(printf '%s\n' "$out" | sed -n 's/^TIME [0-9.]* \([0-9]*\)/\1/p')
  classes=$(printf '%s\n' "$out" | python3 -c '
import json, sys
text = sys.stdin.read()
j = json.loads(text[:text.rfind("}") + 1])
per = {}
for c in j.get("cta_classes", []):
    k = c["kernel"].split(" ")[0]
    per.setdefault(k, [0, 0])
    per[k][0] += 1
    per[k][1] += c["ctas"]
print(" / ".join("%d of %d CTAs" % (n, t) for n, t in per.values()) or "-",
      j["stats"].get("comparisons", 0))' 2>/dev/null)
  echo "| $spec | $label | $* | ${verdict:-?} | ${t:-?} | $(( ${kb:-0} / 1024 )) | $classes |"
}

echo "| spec | size | flags | verdict | wall (s) | peak MiB | classes (ref / opt), comparisons |"
echo "|---|---|---|---|---:|---:|---|"
for spec in smem32.sizes.json reg64.sizes.json; do
  for n in 128 256 512 1024 1000; do
    [ -n "$quick" ] && [ "$n" -gt 256 ] && continue
    run "$spec" "$n³" --size M=$n --size N=$n --size K=$n
  done
  for n in 128 256; do
    run "$spec" "$n³" --no-symmetry --size M=$n --size N=$n --size K=$n
  done
done
for n in 128 256 512 1024 1000; do
  [ -n "$quick" ] && [ "$n" -gt 256 ] && continue
  run ../sized/softmax_rows.sizes.json "$n rows of $n" --size M=$n --size N=$n
done
for n in 128 256; do
  run ../sized/softmax_rows.sizes.json "$n rows of $n" --no-symmetry --size M=$n --size N=$n
done
for n in 512 1024 4096; do
  [ -n "$quick" ] && [ "$n" -gt 512 ] && continue
  run attention.sizes.json "Lq = Lk = $n, d 64" --size LQ=$n --size LK=$n
done
run attention.sizes.json "Lq = Lk = 128, d 64" --no-symmetry --size LQ=128 --size LK=128
run attention.sizes.json "Lq = Lk = 512, d 64" --no-symmetry --size LQ=512 --size LK=512
