#!/usr/bin/env bash
# real_suite_test.sh BIN_DIR
#
# The performance workflow's scripts end to end with the real heapline-bench
# (one tiny scenario), against a local bare repository, split as the
# workflow's jobs are: measured in an offline checkout, handed over as a
# file, published from a fresh checkout without heapline-bench. The pushed
# point is the real suite's, with the commit and range run_suite.sh gave it,
# and it passes the real validate.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench=$1/heapline-bench
[[ -x "$bench" ]] || fail "no heapline-bench at $bench"
export HEAPLINE_BENCH=$bench

make_remote
mapfile -t pushed < <(push_commits 2)
clone run
git -C "$scratch/run" checkout --quiet --detach "${pushed[1]}"
ci_env=(CI=true GITHUB_ACTIONS=true GITHUB_REF=refs/heads/main GITHUB_EVENT_NAME=push
  "GITHUB_SHA=${pushed[1]}" "GITHUB_EVENT_BEFORE=$(git -C "$scratch/developer" rev-parse "${pushed[0]}~1")")
in_run run env "${ci_env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/checkout_store.sh"
in_run run env "${ci_env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/run_suite.sh" --scale 0.0005 --runs 2 --only churn-1t \
  --out "$scratch/page"
"$bench" validate --store "$scratch/run/bench-data"
clone publisher
in_run publisher env "${ci_env[@]}" HEAPLINE_BENCH="$scratch/no-heapline-bench" \
  HEAPLINE_NEW_POINTS="$scratch/run/build/ci/run-points.jsonl" "$ci/checkout_store.sh"
in_run publisher env "${ci_env[@]}" HEAPLINE_BENCH="$scratch/no-heapline-bench" \
  HEAPLINE_NEW_POINTS="$scratch/run/build/ci/run-points.jsonl" "$ci/publish_points.sh"

remote_points >"$scratch/points.jsonl"
assert_eq "$(wc -l <"$scratch/points.jsonl")" 1 "points on the remote"
assert_eq "$(python3 -c '
import json, sys
p = json.loads(open(sys.argv[1]).read())
print(p["scenario"], p["commit"], p["commit_range"]["first"], p["commit_range"]["last"], p["runs"])' "$scratch/points.jsonl")" \
  "churn-1t ${pushed[1]} ${pushed[0]} ${pushed[1]} 2" "the real point's scenario, commit, range and runs"
mkdir -p "$scratch/check" && cp "$scratch/points.jsonl" "$scratch/check/"
"$bench" validate --store "$scratch/check"
echo "real suite end to end: ok"
