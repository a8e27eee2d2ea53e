#!/bin/sh
# Whole-grid scaling ("ctas": "all"): the examples/kernels/scaling pairs at
# growing sizes, with CTA classes and without (--no-symmetry), one line per
# run: wall time, peak memory, verdict, and the classes of each kernel
# (and the size-parametric row softmax of examples/kernels/sized).
# docs/performance.md ("Whole grid at real sizes") holds a measured table.
#
#   bench/scaling.sh [path/to/tileverify] [--quick | --targets]
#
# --quick: only the sizes that take a few seconds. Without symmetry the
# larger sizes are skipped (past 256 they take minutes and gigabytes; the
# table says what they would need).
#
# --targets: only the target rows of issue 33 (docs/performance.md,
# "Targets of issue 33"), one row each with its target, under a time limit
# of TARGET_FACTOR (default 3) times the target, at least 60 s, and
# --max-memory MAXMEM (default 6G: the target is 4 GB, and the check must
# not take a shared machine's memory), so that the script ends. A row that
# runs out says which limit ended it in its verdict: unknown (time limit),
# (memory limit) or (would take: the whole grid would run past the time
# limit, said after its first CTAs), with the reason on stderr; that is the
# row's result, not a failure of the script.
set -u
cli=${1:-build/src/tileverify}
quick=${2:-}
root=$(dirname "$0")/..
dir=$root/examples/kernels/scaling
timeout=${TIMEOUT:-600}

target() {  # spec label target-seconds sizes... : one row of the targets table
  spec=$1
  label=$2
  goal=$3
  shift 3
  limit=$(( goal * ${TARGET_FACTOR:-3} ))
  [ "$limit" -lt 60 ] && limit=60
  out=$( { /usr/bin/time -f "TIME %e %U %S %M" "$cli" equiv --json --quiet --timeout "$limit" \
           --max-memory "${MAXMEM:-6G}" "$root/$spec" "$@"; } 2>&1)
  printf '%s\n' "$out" | python3 -c '
import json, sys
spec, label, goal, limit = sys.argv[1:5]
text = sys.stdin.read()
tail = [l.split() for l in text.splitlines() if l.startswith("TIME ")]
wall, user, sys_, kb = tail[-1][1:5] if tail else ("?", "0", "0", "0")
try:
    j = json.loads(text[text.find("{"):text.rfind("}") + 1])
    verdict = j.get("verdict", "?")
except ValueError:
    j, verdict = {}, "no report"
if verdict == "unknown":  # say which limit ended it
    why = [d.get("message", "") for d in j.get("diagnostics", []) if d.get("kind") == "limit"]
    for key in ("would take", "memory limit", "time limit"):
        if key in " ".join(why):
            verdict += " (%s)" % key
            break
    for w in why:  # the whole reason, on stderr: the table stays one line a row
        sys.stderr.write("%s %s: %s\n" % (spec.split("/")[-1], label, w))
met = ""
if verdict == "equivalent" and wall != "?":
    met = " ✓" if float(wall) <= float(goal) else " ✗"
print("| %s | %s | %s | %s%s | %.1f | %d | %s | %s |" % (
    spec.split("/")[-1].replace(".sizes.json", ""), label, goal, wall, met,
    float(user) + float(sys_), int(kb) // 1024, verdict, limit))' "$spec" "$label" "$goal" "$limit"
}

if [ "$quick" = --targets ]; then
  echo "| pair | size | target s | wall s | CPU s | peak MiB | verdict | limit s |"
  echo "|---|---|---:|---:|---:|---:|---|---:|"
  g=examples/kernels/scaling
  target $g/warptile.sizes.json "1024³" 5 --size M=1024 --size N=1024 --size K=1024
  target $g/warptile.sizes.json "4096³" 60 --size M=4096 --size N=4096 --size K=4096
  target $g/smem32.sizes.json "4096³" 15 --size M=4096 --size N=4096 --size K=4096
  target bench/targets/tma_gemm.sizes.json "2048 × 2048 × 1024" 120 --size M=2048 --size N=2048 --size K=1024
  target bench/targets/tma_gemm.sizes.json "4096³" 300 --size M=4096 --size N=4096 --size K=4096
  target $g/attention.sizes.json "Lq = Lk = 4096, d 64" 10 --size LQ=4096 --size LK=4096
  target $g/attention.sizes.json "Lq = Lk = 16384, d 64" 60 --size LQ=16384 --size LK=16384
  target examples/triton/sm90/matmul_grouped.sizes.json "4096³" 120 --size M=4096 --size N=4096 --size K=4096
  exit 0
fi

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
