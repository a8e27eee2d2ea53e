#!/bin/sh
# Builds tests/cmake/consumer against tileverify, by find_package on an
# installed copy ("install" mode) or by add_subdirectory ("subdirectory" mode),
# and runs it. Neither mode compiles the library again: this test runs in
# every build of the suite (g++ and clang in CI) and a second compile of it
# took 390 s of the CI's time.
#   consumer_test.sh MODE SOURCE_DIR BUILD_DIR CXX_COMPILER LIBRARY_FILE
set -eu
mode=$1 source_dir=$2 build_dir=$3 cxx=$4 library=$5
work="$build_dir/consumer-$mode"
rm -rf "$work"
mkdir -p "$work"
# The consumer is compiled by the compiler that built the library (a clang
# build's consumer is a clang consumer), with make, whose per-target rules
# the subdirectory mode relies on.
configure() {
  cmake -G "Unix Makefiles" -S "$source_dir/tests/cmake/consumer" -B "$work/build" \
    -DCMAKE_CXX_COMPILER="$cxx" "$@" >/dev/null
}
if [ "$mode" = install ]; then
  cmake --install "$build_dir" --prefix "$work/prefix" >/dev/null
  configure -DCMAKE_PREFIX_PATH="$work/prefix"
  cmake --build "$work/build" -j2 >/dev/null
else
  # What add_subdirectory has to get right is CMake's: the source tree
  # configures inside another project (its dependencies found, its tests,
  # examples and install rules off), and tileverify::tileverify carries the
  # include directories, the C++17 requirement and the link libraries the
  # consumer needs. The library's objects themselves would come from the same
  # sources, compiler and flags as BUILD_DIR's, so BUILD_DIR's archive takes
  # their place, and consumer/fast builds the consumer without its
  # dependencies: a compile of main.cpp and a link, with the link line that
  # add_subdirectory produced.
  configure -DTILEVERIFY_SOURCE="$source_dir"
  expected=$(cat "$work/build/tileverify_library.txt")
  for off in tests examples bench; do
    if [ -e "$work/build/tileverify/$off" ]; then
      echo "consumer_test: add_subdirectory built tileverify's $off" >&2
      exit 1
    fi
  done
  mkdir -p "$(dirname "$expected")"
  cp "$library" "$expected"
  cmake --build "$work/build" --target consumer/fast >/dev/null
fi
"$work/build/consumer"
