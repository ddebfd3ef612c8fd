#!/usr/bin/env bash
# tools/ci/compare_pull_request.sh BASE [HEAD]
#
# Measures a pull request before it is merged: builds libheapline.so at BASE
# (the base branch's commit) and at HEAD (default: the checkout's), through
# tools/compare_releases.sh with one build of the scenario programs, runs
# `heapline-bench compare` at a reduced scale, then counts instructions under
# callgrind (tools/ci/pull_request_figures.py). Prints the table, keeps it in
# $HEAPLINE_PR_DIR/summary.md (default build/pull-request), and appends it to
# $GITHUB_STEP_SUMMARY when GitHub Actions sets it.
#
# Environment, besides tools/ci/common.sh's: HEAPLINE_PR_SCALE (compare's
# --scale, default 0.05), HEAPLINE_PR_RUNS (default 5), HEAPLINE_PR_ROUNDS
# (default 3), HEAPLINE_PR_INSTRUCTIONS_SCALE (default 0.02),
# HEAPLINE_PR_ONLY (compare's --only, default every scenario).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

(($# >= 1 && $# <= 2)) || die "usage: tools/ci/compare_pull_request.sh BASE [HEAD]"
cd "$repo_dir"
resolve() {
  [[ "$1" =~ ^[A-Za-z0-9._/~^-]+$ ]] || die "'$1' is not a ref name"
  git rev-parse --verify --quiet "$1^{commit}" ||
    die "'$1' is not a commit of $repo_dir (a shallow checkout? fetch the base with fetch-depth: 0)"
}
base=$(resolve "$1")
head=$(resolve "${2:-HEAD}")
out=${HEAPLINE_PR_DIR:-$build_dir/pull-request}
command -v valgrind >/dev/null || die "valgrind is not installed (tools/setup.sh installs it)"

mkdir -p "$out"
say "comparing the library of ${head:0:12} with its base ${base:0:12}"
only=()
[[ -z "${HEAPLINE_PR_ONLY:-}" ]] || only=(--only "$HEAPLINE_PR_ONLY")
HEAPLINE_BUILD_DIR=$build_dir HEAPLINE_COMPARE_DIR=$out/compare \
  "$ci_source_dir/tools/compare_releases.sh" "base=$base" "pull request=$head" -- \
  --scale "${HEAPLINE_PR_SCALE:-0.05}" --runs "${HEAPLINE_PR_RUNS:-5}" --rounds "${HEAPLINE_PR_ROUNDS:-3}" \
  "${only[@]}" --json "$out/comparison.json" --out "$out/generated" >"$out/wall.md"

library_at() {  # the libheapline.so that compare_releases.sh built at commit $1
  local lib
  lib=$(find "$out/compare/build-$1" -name libheapline.so -type f | head -n 1)
  [[ -n "$lib" ]] || die "no libheapline.so built for ${1:0:12} in $out/compare"
  printf '%s' "$lib"
}
python3 "$ci_source_dir/tools/ci/pull_request_figures.py" \
  --catalogue "$ci_source_dir/scenarios/scenarios.json" --bin "$build_dir/bin" --source "$ci_source_dir" \
  --comparison "$out/comparison.json" --lib "base=$(library_at "$base")" --lib "pull request=$(library_at "$head")" \
  --instructions-scale "${HEAPLINE_PR_INSTRUCTIONS_SCALE:-0.02}" >"$out/figures.md"

{
  echo "## heapline's overhead: this pull request against its base"
  echo
  echo "Base \`${base:0:12}\`, pull request \`${head:0:12}\`."
  echo
  cat "$out/figures.md"
  echo
  echo "\`heapline-bench compare\`'s own table, for reference: wall clock, CPU time in brackets (noisy on a shared"
  echo "runner; the figures above resolve small changes):"
  echo
  cat "$out/wall.md"
} >"$out/summary.md"
cat "$out/summary.md"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
