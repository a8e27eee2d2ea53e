#!/bin/sh
# The deadline regressions (issue 31): run_deadlines.sh TILEVERIFY TABLE [FILTER]
#
# Each line of TABLE (spec | command | arguments | exit codes | within |
# message) runs from the robustness3/ folder beside it and must end with
# one of the exit codes, print a line matching the message (grep -E, stdout
# and stderr together) and end within `within` seconds of wall time: what
# is tested is that --timeout holds from the process's start, so the time
# is part of the answer. A hard limit of within + 30 s ends a hang.
# FILTER, if given, runs only the lines whose spec, command or arguments
# contain it. (run.sh, for expected.txt, checks exit codes and messages
# only, under a fixed 30 s limit.)
set -u
cli=$1
table=$2
only=${3:-}
dir=$(cd "$(dirname "$table")/robustness3" && pwd) || exit 2
case $cli in
  /*) ;;
  */*) cli=$(cd "$(dirname "$cli")" && pwd)/$(basename "$cli") ;;
esac
if ! grep -q __asan_init "$cli" 2>/dev/null; then
  ulimit -v 8388608 2>/dev/null || true  # a guard for the machine (see run.sh)
fi

out=$(mktemp) || exit 2
trap 'rm -f "$out"' EXIT INT TERM
trim() { printf '%s' "$1" | sed 's/^[[:space:]]*//; s/[[:space:]]*$//'; }
now() { date +%s.%N; }

runs=0
failed=0
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
  hard=$(awk -v w="$within" 'BEGIN { printf "%d", w + 30 }')
  start=$(now)
  # $args is split into words on purpose: "--timeout 5" is two arguments.
  # shellcheck disable=SC2086
  (cd "$dir" && exec timeout -k 5 "$hard" "$cli" "$cmd" "$file" $args </dev/null) >"$out" 2>&1
  rc=$?
  secs=$(awk -v a="$start" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }')
  what="tileverify $cmd $file $args"
  problem=""
  case $rc in
    124 | 137) problem="did not end within $hard s (exit $rc): a hang" ;;
    134) problem="aborted (exit 134)" ;;
    *)
      case ",$codes," in
        *",$rc,"*)
          if ! grep -Eq -- "$regex" "$out"; then
            problem="exit $rc as expected, but no line matches: $regex"
          elif awk -v s="$secs" -v w="$within" 'BEGIN { exit !(s > w) }'; then
            problem="exit $rc as expected, but it took $secs s, more than $within s"
          fi
          ;;
        *) problem="exit $rc, expected $codes" ;;
      esac
      ;;
  esac
  if [ -n "$problem" ]; then
    failed=$((failed + 1))
    echo "FAIL: $what: $problem (${secs} s)"
    sed 's/^/    | /' "$out" | head -n 12
  else
    echo "ok:   $what -> $rc (${secs} s, limit $within s)"
  fi
done <"$table"

if [ "$runs" -eq 0 ]; then
  echo "no line of $table was run${only:+ (filter: $only)}"
  exit 1
fi
uptime 2>/dev/null | sed 's/^.*load/load/'  # the times above depend on it
echo "$((runs - failed)) of $runs passed"
[ "$failed" -eq 0 ]
