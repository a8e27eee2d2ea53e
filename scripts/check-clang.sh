#!/bin/sh
# Builds the library, the CLI, the tests and the examples with clang++ in
# C++17 with warnings as errors, then runs the test suite on that build but
# the four slowest example families: CI builds with g++ (the README's
# commands) and this covers the other compiler TVM and TileLang users build
# with. Installs clang if it is missing (Debian 12).
#   scripts/check-clang.sh [build-dir]
#
# What clang can change is the compile (its warnings, its reading of the
# language: every target is built, with -Werror) and the code it generates
# for the library and the CLI (unspecified evaluation orders, undefined
# behaviour that one compiler's code happens to survive). The doctests, the
# CLI and consumer tests, the robustness regressions, the fuzz replays of
# every example's PTX and spec, and the spec-verdict examples of the other
# families all run on the clang build. Left out are example.hopper,
# example.triton_sm90, example.triton and example.attention: they run the
# same library code on larger kernels (7 minutes of the g++ pass on 2 cores)
# and the g++ pass has just checked their verdicts; their PTX is parsed and
# lowered by fuzz.replay_ptx here, and their instructions' semantics are in
# the doctests of tests/ptx and tests/eval.
set -eu
cd "$(dirname "$0")/.."
dir=${1:-build-clang}
if ! command -v clang++ >/dev/null 2>&1; then
  if [ "$(id -u)" -eq 0 ]; then sudo=""; else sudo="sudo"; fi
  echo "check-clang: installing clang"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq clang
fi
clang++ --version | head -n 1
CXX=clang++ cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS="-Werror" -DTILEVERIFY_BUILD_BENCH=OFF
cmake --build "$dir" -j2
ctest --test-dir "$dir" --output-on-failure -j2 -E '^example\.(hopper|triton_sm90|triton|attention)$'
