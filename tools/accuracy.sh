#!/usr/bin/env bash
# accuracy.sh [THREADS...]: the stated bound against the error it states, by
# counts only (no times). For each thread count T (default 1 4 16 64 256),
# `malloc_churn T 100000 16 4096 64` (64 MiB held, each thread's 64 blocks
# held at once beside it) runs once under the accuracy build
# (`heapline-bench accuracy`): its batched peak against the exact peak of the
# same run. The goal is |error| <= bound <= the library's budget (max(1% of
# the peak, 256 KiB) by default) in every row; exits 1 when a row misses it.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/library.sh
source "$source_dir/tools/lib/library.sh"
bin=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}/bin
threads=("$@")
((${#threads[@]} > 0)) || threads=(1 4 16 64 256)
status=0
for t in "${threads[@]}"; do
  printf 'threads %3d: ' "$t"
  "$bin/heapline-bench" accuracy --lib "$(heapline_library "$bin")" -- "$bin/malloc_churn" "$t" 100000 16 4096 64 || status=1
done
exit "$status"
