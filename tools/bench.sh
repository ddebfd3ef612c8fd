#!/usr/bin/env bash
# The main job of the README: set up, build Release, measure heapline's
# overhead on the five catalogue scenarios, and print the table.
# Options are passed to `heapline-bench suite` (--runs N, --scale F, --only
# NAME[,NAME], --lib PATH ...).
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}

"$source_dir/tools/setup.sh"
# Only what the suite runs: heapline-bench brings the scenario program and
# the forwarding-only floor (its dependencies), heapline_preload is
# libheapline.so. Not the tests, not the microbenchmarks.
HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh" heapline-bench heapline_preload
exec "$build_dir/bin/heapline-bench" suite "$@"
