#!/bin/sh
# Regressions with a time limit per line: run_timed.sh TILEVERIFY TABLE DIR
#
# TABLE has the lines of expected.txt (run.sh) and a sixth column:
#   first file | command | more arguments | exit codes | message (grep -E) | seconds
# Each line runs `tileverify COMMAND FIRST-FILE ARGUMENTS` in DIR (arguments
# are split into words and globs expand there: `merge a.0.json | a.[123].json`
# merges four reports), and fails unless it ends within SECONDS (wall clock,
# measured to the millisecond; 30 when the column is empty) with one of the
# exit codes and prints a line matching the message (stdout and stderr).
# What a line checks is the answer and how fast it comes: "refused at once"
# is part of the fix for a count that once ran for minutes.
set -u
cli=$1
table=$2
dir=$(cd "$3" && pwd) || exit 2
case $cli in
  /*) ;;
  */*) cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli") ;;
esac
# As run.sh: a run that escaped its memory budget must not take the
# machine's memory (not under AddressSanitizer, which reserves terabytes).
if ! grep -q __asan_init "$cli" 2>/dev/null; then
  ulimit -v 8388608 2>/dev/null || true
fi
out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT INT TERM
trim() { printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
ms() { date +%s%3N; }

runs=0
failed=0
while IFS='|' read -r file cmd args codes regex limit; do
  file=$(trim "$file")
  case $file in '' | '#'*) continue ;; esac
  cmd=$(trim "$cmd")
  args=$(trim "$args")
  codes=$(trim "$codes")
  regex=$(trim "$regex")
  limit=$(trim "${limit:-}")
  [ -n "$limit" ] || limit=30
  runs=$((runs + 1))
  # The hard stop a little past the limit, so that a slow run still shows
  # how slow it was; whole seconds for timeout(1).
  hard=$(awk -v s="$limit" 'BEGIN { printf "%d", s + 5 }')
  start=$(ms)
  # shellcheck disable=SC2086
  (cd "$dir" && exec timeout -k 5 "$hard" "$cli" "$cmd" "$file" $args </dev/null) >"$out" 2>&1
  rc=$?
  took=$(($(ms) - start))
  secs=$(awk -v t="$took" 'BEGIN { printf "%.3f", t / 1000 }')
  what="tileverify $cmd $file $args"
  problem=""
  case $rc in
    124 | 137) problem="did not end within $hard s (exit $rc)" ;;
    134) problem="aborted (exit 134)" ;;
    *)
      case ",$codes," in
        *",$rc,"*) grep -Eq -- "$regex" "$out" || problem="exit $rc as expected, but no line matches: $regex" ;;
        *) problem="exit $rc, expected $codes" ;;
      esac
      ;;
  esac
  if [ -z "$problem" ] && awk -v t="$took" -v s="$limit" 'BEGIN { exit !(t > s * 1000) }'; then
    problem="took $secs s, more than $limit s"
  fi
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL: $what: $problem ($secs s)"
    sed 's/^/    | /' "$out" | head -n 12
  else
    echo "ok:   $what -> $rc ($secs s)"
  fi
done <"$table"

if [ "$runs" -eq 0 ]; then
  echo "no line of $table was run"
  exit 1
fi
echo "$((runs - failed)) of $runs passed"
[ "$failed" -eq 0 ]
