#!/usr/bin/env bash
# tools/ci/run_suite.sh [SUITE OPTIONS...]
#
# Runs `heapline-bench suite` into the store for the commit being measured,
# with the range of commits the points stand for, and keeps a copy of the
# lines this run added (for the workflow's artifact). Extra arguments go to
# the suite (--runs N, --scale F, --only a,b, --lib PATH, --out DIR).
#
# The commit is $GITHUB_SHA, or HEAD outside GitHub Actions. The workflow's
# concurrency group replaces a pending run with a newer one, so a point may
# stand for several pushes. Its range starts after the newest commit the
# store already has a point for (it knows which runs really happened), else
# after $GITHUB_EVENT_BEFORE (the previous tip of main); with neither (first
# point, the all-zero "before" of a new branch, a manual run, or history
# rewritten by a force-push), the point stands for its own commit only.
#
# Environment, besides tools/ci/common.sh's: GITHUB_SHA, GITHUB_REF,
# GITHUB_EVENT_NAME, GITHUB_EVENT_BEFORE, HEAPLINE_RUN_POINTS (where the
# new lines are copied; default $HEAPLINE_BUILD_DIR/ci/run-points.jsonl), and
# HEAPLINE_CATALOGUES: the scenario catalogues to measure, one suite each,
# space-separated (default: heapline-bench's own, the five scenarios); the
# performance workflow adds scenarios/allocators.json and
# scenarios/threads.json, entries outside the five.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

refuse_unless_main
require_bench
cd "$repo_dir"

points=$(store_points_path)
[[ -d "$store_dir" ]] || die "no store at $store_dir (run tools/ci/checkout_store.sh first)"
run_points=${HEAPLINE_RUN_POINTS:-$build_dir/ci/run-points.jsonl}

is_commit() { [[ "$1" =~ ^[0-9a-f]{4,64}$ ]] && git cat-file -e "$1^{commit}" 2>/dev/null; }

commit=${GITHUB_SHA:-$(git rev-parse HEAD)}
is_commit "$commit" || die "commit '$commit' to measure is not in $repo_dir (a shallow checkout? the workflow fetches with fetch-depth: 0)"
commit=$(git rev-parse "$commit^{commit}")
scratch_err=$(mktemp)
trap 'rm -f "$scratch_err"' EXIT

# The newest point whose commit is in this commit's history, by when the
# points were measured, as heapline-bench's one reader of the store lists
# them. A store it refuses (a bad line) gives no range: the push's previous
# tip does; the validate step after the suite names the line.
newest_measured_ancestor() {
  [[ -s "$points" ]] || return 0
  local candidate listed
  if ! listed=$("$bench" export --store "$store_dir" --format commits 2>"$scratch_err"); then
    say "the store's commits cannot be listed ($(head -n 1 "$scratch_err")); the range comes from the push"
    return 0
  fi
  while IFS= read -r candidate; do
    if is_commit "$candidate" && git merge-base --is-ancestor "$candidate" "$commit"; then
      git rev-parse "$candidate^{commit}"
      return 0
    fi
  done <<<"$listed"
}

base=$(newest_measured_ancestor)
base_source="the newest commit in the store"
if [[ -z "$base" ]]; then
  before=${GITHUB_EVENT_BEFORE:-}
  base_source="the push's previous tip"
  # A new branch's push reports forty zeros as "before"; a manual run none.
  if [[ -n "$before" && ! "$before" =~ ^0+$ ]] && is_commit "$before" &&
    git merge-base --is-ancestor "$before" "$commit"; then
    base=$(git rev-parse "$before^{commit}")
  fi
fi

range_args=()
if [[ -n "$base" ]]; then
  # First-parent order: the commits main itself moved through.
  mapfile -t stands_for < <(git rev-list --first-parent --reverse "$base..$commit")
  if ((${#stands_for[@]} > 1)); then
    range_args=(--commit-range "${stands_for[0]}..$commit")
    say "measuring $commit for the ${#stands_for[@]} commits after $base ($base_source): ${stands_for[0]}..$commit"
  elif ((${#stands_for[@]} == 1)); then
    say "measuring $commit, the only commit after $base ($base_source)"
  else
    say "measuring $commit again (the store already has points for it)"
  fi
else
  say "measuring $commit on its own (no earlier measured commit in its history)"
fi

lines_before=0
[[ -f "$points" ]] && lines_before=$(wc -l <"$points")

suite_status=0
read -r -a catalogues <<<"${HEAPLINE_CATALOGUES:-}"
if ((${#catalogues[@]} == 0)); then
  "$bench" suite --store "$store_dir" --commit "$commit" "${range_args[@]}" "$@" || suite_status=$?
fi
for catalogue in "${catalogues[@]}"; do
  say "measuring the scenarios of $catalogue"
  "$bench" --catalogue "$catalogue" suite --store "$store_dir" --commit "$commit" "${range_args[@]}" "$@" ||
    suite_status=$?
done

# The lines this run appended, kept even when a scenario failed: the suite
# still records the others.
mkdir -p "$(dirname "$run_points")"
if [[ -f "$points" ]]; then
  tail -n "+$((lines_before + 1))" "$points" >"$run_points"
else
  : >"$run_points"
fi
say "$(wc -l <"$run_points") new point(s) in $store_dir; copied to $run_points"
if ((suite_status != 0)); then
  die "heapline-bench suite exited $suite_status (the scenarios that did run are recorded)"
fi
