#!/bin/sh
# The robustness regressions: run.sh TILEVERIFY EXPECTED [FILTER]
#
# Runs every line of EXPECTED (expected.txt: spec | command | arguments |
# exit codes | message) from the robustness/ folder beside it, each under a
# limit of 30 s of CPU time, and fails unless every run ends in time with one
# of the allowed exit codes and prints a line matching the message (grep -E,
# on stdout and stderr together). FILTER, if given, runs only the lines whose
# spec, command or arguments contain it.
#
# CPU time, not wall time: on a machine busy with other builds a run that
# needs 9 s of CPU took 96 s of wall time, and a wall limit then fails a
# correct run. A run that hangs spinning uses CPU and meets the 30 s limit; a
# wall limit of 300 s still ends one that hangs without using CPU.
set -u
cli=$1
table=$2
only=${3:-}
dir=$(cd "$(dirname "$table")/robustness" && pwd) || exit 2
# The runs start in $dir: a relative path to the command must not depend on that.
case $cli in
  /*) ;;
  */*) cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli") ;;
esac

# A guard for the machine, not part of what is tested: a run that escaped its
# memory budget would otherwise take the memory of everyone on the machine
# (a failed allocation is then a check that ran out of memory, exit 3).
# Not for a sanitizer build: AddressSanitizer reserves terabytes of address
# space for its shadow memory, which the limit refuses, and bounds its own.
if ! grep -q __asan_init "$cli" 2>/dev/null; then
  ulimit -v 8388608 2>/dev/null || true
fi

out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT INT TERM
trim() { printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }

runs=0
failed=0
while IFS='|' read -r file cmd args codes regex; do
  file=$(trim "$file")
  case $file in '' | '#'*) continue ;; esac
  cmd=$(trim "$cmd")
  args=$(trim "$args")
  codes=$(trim "$codes")
  regex=$(trim "$regex")
  if [ -n "$only" ]; then
    case "$file $cmd $args" in *"$only"*) ;; *) continue ;; esac
  fi
  runs=$((runs + 1))
  start=$(date +%s)
  # $args is split into words on purpose: "--timeout 5" is two arguments.
  # shellcheck disable=SC2086
  (cd "$dir" && ulimit -S -t 30 && exec timeout -k 5 300 "$cli" "$cmd" "$file" $args </dev/null) >"$out" 2>&1
  rc=$?
  secs=$(($(date +%s) - start))
  what="tileverify $cmd $file $args"
  problem=""
  case $rc in
    124 | 137) problem="did not end within 300 s (exit $rc): a hang" ;;
    152) problem="used more than 30 s of CPU time (exit $rc): a hang" ;;
    134) problem="aborted (exit 134)" ;;
    *)
      case ",$codes," in
        *",$rc,"*) grep -Eq -- "$regex" "$out" || problem="exit $rc as expected, but no line matches: $regex" ;;
        *) problem="exit $rc, expected $codes" ;;
      esac
      ;;
  esac
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL: $what: $problem (${secs} s)"
    sed 's/^/    | /' "$out" | head -n 12
  else
    echo "ok:   $what -> $rc (${secs} s)"
  fi
done <"$table"

if [ "$runs" -eq 0 ]; then
  echo "no line of $table was run${only:+ (filter: $only)}"
  exit 1
fi
echo "$((runs - failed)) of $runs passed"
[ "$failed" -eq 0 ]
