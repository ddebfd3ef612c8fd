#!/usr/bin/env bash
# Long coverage-guided runs of the fuzz targets (tests/fuzz/), with libFuzzer,
# ASan and UBSan, in build/fuzz. The seed corpus is only read: each run
# works in build/fuzz/corpus/TARGET, and an input that breaks a target is
# written to build/fuzz/crashes/ and printed.
#
#   tools/fuzz.sh                  every target, 60 s each
#   tools/fuzz.sh TARGET [SECONDS] one target (fuzz.sh --list names them)
#   tools/fuzz.sh --keep TARGET    merges what the runs found that adds
#                                  coverage into tests/fuzz/corpus/TARGET
#   tools/fuzz.sh --list
#
# The corpus replay (ctest -L fuzz) is part of tools/test.sh; these runs are
# a tool, not a test: they take as long as they are given.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${HEAPLINE_FUZZ_BUILD_DIR:-$source_dir/build/fuzz}
corpus_root=$source_dir/tests/fuzz/corpus

targets_of_tree() {
  sed -n 's/^ *heapline_add_fuzz_target(\([a-z_0-9]*\).*/\1/p' "$source_dir/tests/fuzz/CMakeLists.txt"
}

keep=0
case "${1:-}" in
  --list) targets_of_tree; exit 0 ;;
  --keep) keep=1; shift ;;
  -h|--help) sed -n '2,14p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; exit 0 ;;
esac
if (($# > 2)); then
  echo "usage: tools/fuzz.sh [--keep] [TARGET [SECONDS]] | --list" >&2
  exit 2
fi
mapfile -t known < <(targets_of_tree)
if (($# >= 1)); then
  if [[ " ${known[*]} " != *" $1 "* ]]; then
    echo "fuzz.sh: unknown target '$1'; the targets are: ${known[*]}" >&2
    exit 2
  fi
  targets=("$1")
else
  targets=("${known[@]}")
fi
seconds=${2:-60}
if [[ ! "$seconds" =~ ^[1-9][0-9]*$ ]]; then
  echo "fuzz.sh: SECONDS must be a positive integer, got '$seconds'" >&2
  exit 2
fi

"$source_dir/tools/setup.sh" --fuzz
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  sanitizers="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link"
  CC=clang CXX=clang++ cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DHEAPLINE_FUZZ=ON -DHEAPLINE_BUILD_BENCHMARKS=OFF \
    -DCMAKE_C_FLAGS="$sanitizers" -DCMAKE_CXX_FLAGS="$sanitizers" >/dev/null
fi
cmake --build "$build_dir" --parallel "$(nproc)" --target "${targets[@]/#/fuzz_}"

mkdir -p "$build_dir/crashes"
status=0
for target in "${targets[@]}"; do
  work=$build_dir/corpus/$target
  mkdir -p "$work"
  echo "fuzz.sh: $target for ${seconds} s"
  if ! (cd "$build_dir" && "$build_dir/bin/fuzz_$target" -max_total_time="$seconds" -print_final_stats=1 \
      -artifact_prefix="$build_dir/crashes/$target-" "$work" "$corpus_root/$target" 2>"$build_dir/$target.log"); then
    status=1
    echo "fuzz.sh: $target broke; the input is in $build_dir/crashes/ and the log in $build_dir/$target.log" >&2
    grep -E '^(==[0-9]+==ERROR|SUMMARY|.*runtime error)' "$build_dir/$target.log" | head -5 >&2 || true
  fi
  grep -E '^stat::(number_of_executed_units|new_units_added)' "$build_dir/$target.log" || true
  if ((keep)); then
    "$build_dir/bin/fuzz_$target" -merge=1 "$corpus_root/$target" "$work" 2>/dev/null
    echo "fuzz.sh: tests/fuzz/corpus/$target now holds $(find "$corpus_root/$target" -type f | wc -l) inputs"
  fi
done
exit "$status"
