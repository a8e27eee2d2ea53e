#!/bin/sh
# Builds the library, the CLI and the tests with clang++ in C++17 with
# warnings as errors, then runs the test suite on that build: CI builds with
# g++ (the README's commands) and this covers the other compiler TVM and
# TileLang users build with. Installs clang if it is missing (Debian 12).
#   scripts/check-clang.sh [build-dir]
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
ctest --test-dir "$dir" --output-on-failure -j2
