#!/usr/bin/env bash
# tools/ci/compare_pull_request.sh BASE [HEAD]
#
# Measures a pull request before it is merged: builds libheapline.so at BASE
# (the base branch's commit) and at HEAD (default: the checkout's), through
# tools/compare_releases.sh with one build of the scenario programs, runs
# `heapline-bench compare` at a reduced scale (wall clock and CPU time), then
# `heapline-bench instructions --base`: each scenario's instruction figure of
# both builds, counted as the suite counts a point's, and the harness's
# verdict on the change. Prints the summary, keeps it in
# $HEAPLINE_PR_DIR/summary.md (default build/pull-request), and appends it to
# $GITHUB_STEP_SUMMARY when GitHub Actions sets it.
#
# Exit status: 1 when the instruction figure of a scenario regressed (the
# summary and the error say which scenario and by how much) or when a step
# failed; 0 otherwise. The timed figures are shown, not gated: on a shared
# runner they do not resolve a change of a few points.
#
# Environment, besides tools/ci/common.sh's: HEAPLINE_PR_SCALE (compare's
# --scale, default 0.05), HEAPLINE_PR_RUNS (default 5), HEAPLINE_PR_ROUNDS
# (default 3), HEAPLINE_PR_ONLY (compare's and instructions' --only, default
# every scenario).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
# shellcheck source-path=SCRIPTDIR source=../lib/library.sh
source "$ci_source_dir/tools/lib/library.sh"

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
  local build
  if ! build=$(comparison_build "$out/compare" "$repo_dir" "$1") || ! built_library "$build"; then
    die "no libheapline.so built for ${1:0:12} in $out/compare"
  fi
}
require_bench
# The verdict is heapline-bench's: exit 1 on a regression of a gated figure,
# with the table written either way.
gate_status=0
"$bench" instructions --base "$(library_at "$base")" --lib "$(library_at "$head")" "${only[@]}" \
  --fail-on-regression >"$out/instructions.md" || gate_status=$?

{
  echo "## heapline's overhead: this pull request against its base"
  echo
  echo "Base \`${base:0:12}\`, pull request \`${head:0:12}\`."
  echo
  echo "### Instructions (gated: a regression fails the check)"
  echo
  cat "$out/instructions.md"
  echo
  echo "### Wall clock and CPU time"
  echo
  echo "\`heapline-bench compare\`'s table: wall clock, CPU time in brackets (noisy on a shared runner; shown, not"
  echo "gated):"
  echo
  cat "$out/wall.md"
} >"$out/summary.md"
cat "$out/summary.md"
if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
  cat "$out/summary.md" >>"$GITHUB_STEP_SUMMARY"
fi
if ((gate_status != 0)); then
  regressions=$(grep '^Regression: ' "$out/instructions.md" || true)
  [[ -n "$regressions" ]] || die "heapline-bench instructions failed (exit $gate_status)"
  die "the pull request regresses the instruction figure: ${regressions//$'\n'/ }"
fi
