#!/bin/sh
# Builds tests/cmake/consumer against tileverify, by find_package on an
# installed copy ("install" mode) or by add_subdirectory ("subdirectory" mode).
set -eu
mode=$1 source_dir=$2 build_dir=$3
work="$build_dir/consumer-$mode"
rm -rf "$work"
mkdir -p "$work"
if [ "$mode" = install ]; then
  cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
  cmake -S "$source_dir/tests/cmake/consumer" -B "$work/build" -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
else
  cmake -S "$source_dir/tests/cmake/consumer" -B "$work/build" -DTILEVERIFY_SOURCE="$source_dir" >/dev/null
fi
cmake --build "$work/build" -j2 >/dev/null
"$work/build/consumer"
