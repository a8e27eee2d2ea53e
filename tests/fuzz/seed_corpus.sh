#!/bin/sh
# Collects the seed corpus of the fuzz harnesses (docs/fuzzing.md) into
# OUT/ptx-seeds and OUT/spec-seeds, flat, one file per seed, named after
# its path in the repository: the PTX files of examples/ and tests/, and the
# spec files of examples/ and tests/cases, plus tests/fuzz/regressions/.
# libFuzzer reads these directories; it writes what it finds into another
# (OUT/ptx, OUT/spec), so that the seeds stay as they are.
#
#   sh tests/fuzz/seed_corpus.sh build-fuzz/corpus
set -eu
out=${1:?usage: seed_corpus.sh OUT_DIR}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out/ptx-seeds" "$out/spec-seeds" "$out/ptx" "$out/spec"
copy() {  # copy DEST EXT DIR...
  dest=$1 ext=$2
  shift 2
  (cd "$root" && find "$@" -type f -name "*$ext" | sort) | while read -r f; do
    cp "$root/$f" "$dest/$(printf '%s' "$f" | tr '/' '_')"
  done
}
copy "$out/ptx-seeds" .ptx examples tests
copy "$out/spec-seeds" .json examples tests/cases tests/fuzz/regressions
echo "seeds: $(ls "$out/ptx-seeds" | wc -l) PTX files in $out/ptx-seeds, $(ls "$out/spec-seeds" | wc -l) specs in $out/spec-seeds"
