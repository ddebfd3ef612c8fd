#!/usr/bin/env bash
# tools/ci/render_page.sh
#
# Gathers what the performance workflow uploads as its artifact, in
# $HEAPLINE_ARTIFACT_DIR (default build/performance-history):
#   page/             the history page and its plots, rendered from the store
#                     as published (with any points other runs added)
#   points.jsonl      the whole store
#   run-points.jsonl  the raw points this run measured (from run_suite.sh)
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_bench
artifact_dir=${HEAPLINE_ARTIFACT_DIR:-$repo_dir/build/performance-history}
run_points=${HEAPLINE_RUN_POINTS:-$build_dir/ci/run-points.jsonl}
points=$(store_points_path)
[[ -f "$points" ]] || die "no points in $store_dir to render"

rm -rf "$artifact_dir/page"
mkdir -p "$artifact_dir/page"
"$bench" render --store "$store_dir" --out "$artifact_dir/page"
cp "$points" "$artifact_dir/points.jsonl"
if [[ -f "$run_points" ]]; then
  cp "$run_points" "$artifact_dir/run-points.jsonl"
fi
say "page and points in $artifact_dir"
