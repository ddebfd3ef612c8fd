#!/usr/bin/env bash
# The test command of the README and of CI: set up, build, run every test.
#
#   tools/test.sh [CTEST_ARGS...]             Release build in build/release
#   tools/test.sh --sanitize [CTEST_ARGS...]  ASan + UBSan build in build/sanitize
#
# --sanitize builds everything with the sanitizers of cmake/sanitize.cmake
# (ASan and UBSan in the programs and tests, UBSan in trap mode in the
# preload libraries and the programs run under them) and runs every test
# but those that tools/sanitize.skip lists, with the reason each cannot run
# there. Any report of a sanitizer fails its test.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sanitize=0
if [[ "${1:-}" == --sanitize ]]; then
  sanitize=1
  shift
fi

"$source_dir/tools/setup.sh" --test
if ((sanitize)); then
  build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/sanitize}
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    # -O2 with debug information: the tests' speed, and stacks in reports.
    cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEAPLINE_SANITIZE=ON \
      -DHEAPLINE_BUILD_BENCHMARKS=OFF >/dev/null
  fi
else
  build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
fi
HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh"

if ((!sanitize)); then
  exec ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@"
fi

# One ctest -E of the skipped tests' patterns (REGEX<TAB>REASON per line;
# awk, not grep: a list with no entry is not an error).
skipped=$(awk -F'\t' '!/^#/ && !/^[[:space:]]*$/ { print $1 }' "$source_dir/tools/sanitize.skip" | paste -sd'|' -)
echo "test.sh: under sanitizers, without the tests tools/sanitize.skip lists: ${skipped:-none}"
# Leaks are errors too; a report names its stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" ${skipped:+-E "$skipped"} "$@"
