#!/usr/bin/env bash
# tools/bench.sh sets up, builds only what the suite runs (heapline-bench,
# which brings the scenario program and the forwarding-only floor, and
# libheapline.so) in HEAPLINE_BUILD_DIR, and hands its options to
# `heapline-bench suite`, which measures, appends and renders. Run on a copy
# of the script beside stand-in steps that record how they were called.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "bench_script_test: $*" >&2; exit 1; }

mkdir -p "$work/tree/tools" "$work/build/bin"
cp "$source_dir/tools/bench.sh" "$work/tree/tools/bench.sh"
printf '#!/bin/sh\necho setup >>"%s/calls"\n' "$work" >"$work/tree/tools/setup.sh"
printf '#!/bin/sh\necho "build $HEAPLINE_BUILD_DIR $*" >>"%s/calls"\n' "$work" >"$work/tree/tools/build.sh"
printf '#!/bin/sh\necho "heapline-bench $*" >>"%s/calls"\nexit 3\n' "$work" >"$work/build/bin/heapline-bench"
chmod +x "$work/tree/tools/"*.sh "$work/build/bin/heapline-bench"

status=0
HEAPLINE_BUILD_DIR="$work/build" "$work/tree/tools/bench.sh" --scale 0.1 --only churn-1t,churn-4t \
  --runs 3 --lib /x/lib.so --store "$work/store" --commit abc1234 >"$work/out" 2>&1 || status=$?
[[ $status -eq 3 ]] || fail "the suite's status is not bench.sh's: $status: $(cat "$work/out")"
expected="setup
build $work/build heapline-bench heapline_preload
heapline-bench suite --scale 0.1 --only churn-1t,churn-4t --runs 3 --lib /x/lib.so --store $work/store --commit abc1234"
[[ "$(cat "$work/calls")" == "$expected" ]] || fail "the steps were: $(cat "$work/calls")"

# A step that fails says which, and nothing after it runs.
printf '#!/bin/sh\nexit 5\n' >"$work/tree/tools/build.sh"
: >"$work/calls"
status=0
HEAPLINE_BUILD_DIR="$work/build" "$work/tree/tools/bench.sh" >"$work/out" 2>&1 || status=$?
[[ $status -eq 5 ]] || fail "a failed build exited $status"
grep -q "bench.sh: line [0-9]* failed (status 5)" "$work/out" || fail "the failed step is not named: $(cat "$work/out")"
! grep -q "heapline-bench" "$work/calls" || fail "the suite ran after a failed build"
echo "bench script: ok"
