#!/usr/bin/env bash
# Runs the heap sampler's known-sites program (tests/interposer/programs/
# profile_sites.cpp) with 20 seeds and says how many runs had every
# estimate (sites A, B and C at the peak) within its stated error. Not part
# of ctest: it takes a few minutes. Needs a build (tools/build.sh).
#
#   tools/profile_accuracy.sh [MEAN [FUNCTION]]
#     MEAN: HEAPLINE_SAMPLE for the runs (256k unless given; `on` is the
#     default mean); FUNCTION: memalign, posix_memalign, aligned_alloc,
#     valloc or pvalloc serves every other block of sites A and B, whose
#     part from it must be within its error too.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
test_binary=$build_dir/bin/profile_gtest
if [[ ! -x "$test_binary" ]]; then
  echo "profile_accuracy: $test_binary is missing: build first (tools/build.sh)" >&2
  exit 1
fi
export PROFILE_ACCURACY_MEAN=${1:-256k}
export PROFILE_ACCURACY_THROUGH=${2:-malloc}
exec "$test_binary" --gtest_also_run_disabled_tests --gtest_filter='*DISABLED_AccuracyOverTwentySeeds'
