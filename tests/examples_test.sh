#!/bin/sh
# Runs `tileverify equiv` on every spec of the given example families (and
# `tileverify check` on a spec of one kernel, "kernel": {...}) and checks
# each verdict against the spec's "expect" key. Prints one line per
# spec and a closing "N passed, N failed" line; exits non-zero on a mismatch.
set -u
cli=$1
shift
pass=0
fail=0
for dir in "$@"; do
  for spec in "$dir"/*.json; do
    expect=$(sed -n 's/.*"expect": *"\([a-z_]*\)".*/\1/p' "$spec" | head -n 1)
    [ -n "$expect" ] || continue
    command=equiv
    grep -q '"kernel": *{' "$spec" && command=check
    got=$("$cli" $command --json "$spec" | sed -n 's/^  "verdict": "\([a-z_]*\)".*/\1/p')
    if [ "$got" = "$expect" ]; then
      pass=$((pass + 1))
      echo "ok   $spec: $got"
    else
      fail=$((fail + 1))
      echo "FAIL $spec: expected $expect, got ${got:-nothing}"
    fi
  done
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
