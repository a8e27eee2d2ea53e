#!/bin/sh
# The regression tables: run.sh TILEVERIFY TABLE DIR [FILTER]
#
# Each line of TABLE is
#   first file | command | more arguments | exit codes | seconds | message
# and runs `tileverify COMMAND FIRST-FILE ARGUMENTS` in DIR (the arguments are
# split into words and globs expand there: `merge a.0.json | a.[123].json`
# merges four reports). It fails unless the run ends with one of the exit
# codes (comma-separated) and prints a line matching the message (grep -E, on
# stdout and stderr together; the message is the rest of the line, so it may
# hold '|'). FILTER, if given, runs only the lines whose file, command or
# arguments contain it. Blank lines and lines starting with '#' are skipped.
#
# `seconds`, when given, is part of the answer: the run must end within that
# many seconds of wall time, measured to the millisecond from the process's
# start (what such a line tests is that --timeout holds, or that a refusal
# comes at once); a hard stop 30 s later ends a hang.
# When `seconds` is empty the time is not checked, only bounded: 30 s of CPU
# time and 300 s of wall time. CPU time, because on a machine busy with other
# builds a run that needs 9 s of CPU took 96 s of wall time: a wall limit
# would fail a correct run, while a run that hangs spinning meets the CPU
# limit and one that hangs without using CPU meets the wall limit.
set -u
cli=$1
table=$2
dir=$(cd "$3" && pwd) || exit 2
only=${4:-}
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
ms() { date +%s%3N; }

runs=0
failed=0
timed=0
while IFS='|' read -r file cmd args codes within regex; do
  file=$(trim "$file")
  case $file in '' | '#'*) continue ;; esac
  cmd=$(trim "$cmd")
  args=$(trim "$args")
  codes=$(trim "$codes")
  within=$(trim "$within")
  regex=$(trim "$regex")
  if [ -n "$only" ]; then
    case "$file $cmd $args" in *"$only"*) ;; *) continue ;; esac
  fi
  runs=$((runs + 1))
  if [ -n "$within" ]; then
    timed=1
    hard=$(awk -v w="$within" 'BEGIN { printf "%d", w + 30 }')
    cpu=unlimited
  else
    hard=300
    cpu=30
  fi
  start=$(ms)
  # $args is split into words on purpose: "--timeout 5" is two arguments.
  # shellcheck disable=SC2086
  (cd "$dir" && ulimit -S -t "$cpu" && exec timeout -k 5 "$hard" "$cli" "$cmd" "$file" $args </dev/null) >"$out" 2>&1
  rc=$?
  took=$(($(ms) - start))
  secs=$(awk -v t="$took" 'BEGIN { printf "%.2f", t / 1000 }')
  what="tileverify $cmd $file $args"
  problem=""
  case $rc in
    124 | 137) problem="did not end within $hard s (exit $rc): a hang" ;;
    152) problem="used more than $cpu s of CPU time (exit $rc): a hang" ;;
    134) problem="aborted (exit 134)" ;;
    *)
      case ",$codes," in
        *",$rc,"*)
          if ! grep -Eq -- "$regex" "$out"; then
            problem="exit $rc as expected, but no line matches: $regex"
          elif [ -n "$within" ] && awk -v t="$took" -v w="$within" 'BEGIN { exit !(t > w * 1000) }'; then
            problem="exit $rc as expected, but it took $secs s, more than $within s"
          fi
          ;;
        *) problem="exit $rc, expected $codes" ;;
      esac
      ;;
  esac
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL: $what: $problem ($secs s)"
    sed 's/^/    | /' "$out" | head -n 12
  else
    echo "ok:   $what -> $rc ($secs s${within:+, limit $within s})"
  fi
done <"$table"

if [ "$runs" -eq 0 ]; then
  echo "no line of $table was run${only:+ (filter: $only)}"
  exit 1
fi
echo "$((runs - failed)) of $runs passed"
# Wall-time limits depend on the machine's load: show it beside them.
[ "$timed" -eq 0 ] || uptime 2>/dev/null | sed 's/^.*load/load/'
[ "$failed" -eq 0 ]
