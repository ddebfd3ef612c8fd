#!/usr/bin/env bash
# github_env_test.sh CASE
#
# The performance workflow's scripts as GitHub Actions runs them (CI=true,
# GITHUB_SHA, GITHUB_REF, GITHUB_EVENT_NAME, GITHUB_EVENT_BEFORE) against a
# local bare repository, with the fake heapline-bench: the points carry the
# right commit and commit range, runs off main are refused, the hand-off from
# the measuring job to the publishing one loses and doubles nothing, and the
# verdict step works.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case_name=$1

# workflow_run NAME EVENT SHA BEFORE [SUITE OPTIONS]: the workflow's steps in
# a fresh checkout of SHA, as actions/checkout leaves it.
workflow_run() {
  local name=$1 event=$2 sha=$3 before=$4
  shift 4
  clone "$name"
  git -C "$scratch/$name" checkout --quiet --detach "$sha"
  local env=(CI=true GITHUB_ACTIONS=true GITHUB_REF=refs/heads/main "GITHUB_EVENT_NAME=$event" "GITHUB_SHA=$sha")
  [[ "$event" != push ]] || env+=("GITHUB_EVENT_BEFORE=$before")
  in_run "$name" env "${env[@]}" "$ci/checkout_store.sh"
  in_run "$name" env "${env[@]}" "$ci/run_suite.sh" "$@"
  in_run "$name" env "${env[@]}" "$ci/publish_points.sh"
}

# expect_newest_points COUNT COMMIT FIRST LAST: the remote's newest COUNT
# points are for COMMIT with the range FIRST..LAST ("" "" for none).
expect_newest_points() {
  local count=$1 commit=$2 first=$3 last=$4 described
  described=$(remote_points | tail -n "$count" | python3 -c '
import json, sys
for line in sys.stdin:
    p = json.loads(line)
    r = p["commit_range"]
    print(p["commit"], (r["first"] + ".." + r["last"]) if r else "none")
' | sort -u)
  local expected_range=none
  [[ -z "$first" ]] || expected_range=$first..$last
  assert_eq "$described" "$commit $expected_range" "commit and range of the newest $count point(s)"
}

zeros=0000000000000000000000000000000000000000

# first_push_measured: a remote with c1, then a push of one commit, c2,
# measured: the point stands for that commit alone. Sets the caller's c1
# and c2.
first_push_measured() {
  make_remote
  c1=$(git -C "$scratch/developer" rev-parse HEAD)
  c2=$(push_commits 1)
  workflow_run run-c2 push "$c2" "$c1"
  expect_newest_points 2 "$c2" "" ""
}

commit_ranges() {
  local c1 c2 c3 c5 c6 c7 pushed
  first_push_measured

  # A push of three commits at once: the point stands for all three.
  mapfile -t pushed < <(push_commits 3)
  c3=${pushed[0]} c5=${pushed[2]}
  workflow_run run-c5 push "$c5" "$c2"
  expect_newest_points 2 "$c5" "$c3" "$c5"

  # The run for c6 was waiting when c7 came, and was replaced: c7's "before"
  # is c6, but the store knows c5 was the last measured commit.
  c6=$(push_commits 1)
  c7=$(push_commits 1)
  workflow_run run-c7 push "$c7" "$c6"
  expect_newest_points 2 "$c7" "$c6" "$c7"
}

# The ranges of the runs that have no "before" or whose "before" is gone
# (a case of its own: each workflow run takes seconds).
commit_ranges_without_before() {
  local c1 c2 c3 c4 c9 rewritten pushed
  first_push_measured

  # A manual run on main has no "before": the store gives the range, from
  # the commit after the last measured one (c2) to c9.
  mapfile -t pushed < <(push_commits 7)
  c3=${pushed[0]} c4=${pushed[1]} c9=${pushed[6]}
  workflow_run run-manual workflow_dispatch "$c9" ""
  expect_newest_points 2 "$c9" "$c3" "$c9"

  # Measuring the same commit again: it stands for itself.
  workflow_run run-again workflow_dispatch "$c9" ""
  expect_newest_points 2 "$c9" "" ""

  # History rewritten by a force-push back to c4 and on: "before" (c9) and
  # the newest measured commit are gone from main's history; the newest
  # measured commit still in it is c2.
  dev_git -C "$scratch/developer" reset --quiet --hard "$c4"
  echo rewritten >>"$scratch/developer/code.txt"
  dev_git -C "$scratch/developer" commit --quiet -am rewritten
  rewritten=$(git -C "$scratch/developer" rev-parse HEAD)
  git -C "$scratch/developer" push --quiet --force origin main
  workflow_run run-rewritten push "$rewritten" "$c9"
  expect_newest_points 2 "$rewritten" "$c3" "$rewritten"
}

commit_ranges_of_a_new_store() {
  make_remote
  local c2 c3 c5 pushed
  c2=$(push_commits 1)
  mapfile -t pushed < <(push_commits 3)
  c3=${pushed[0]} c5=${pushed[2]}

  # A new store (another branch name) and a push creating the branch, whose
  # "before" is all zeros: no range. Then a garbage "before": none either.
  export HEAPLINE_STORE_BRANCH=bench-data-new
  workflow_run run-new-branch push "$c5" "$zeros"
  assert_eq "$(git --git-dir="$remote_git" show bench-data-new:points.jsonl | python3 -c 'import json,sys; print({(json.loads(l)["commit"], json.loads(l)["commit_range"] is None) for l in sys.stdin})')" \
    "{('$c5', True)}" "points of a new branch's first push"
  unset HEAPLINE_STORE_BRANCH
  # With "before" alone (an empty store), the range starts after it.
  export HEAPLINE_STORE_BRANCH=bench-data-before
  workflow_run run-before-only push "$c5" "$c2"
  assert_eq "$(git --git-dir="$remote_git" show bench-data-before:points.jsonl | python3 -c 'import json,sys; print({(json.loads(l)["commit"], json.loads(l)["commit_range"]["first"]) for l in sys.stdin})')" \
    "{('$c5', '$c3')}" "points ranged by GITHUB_EVENT_BEFORE"
  export HEAPLINE_STORE_BRANCH=bench-data-garbage
  # shellcheck disable=SC2016 # the text must reach the script unexpanded
  workflow_run run-garbage push "$c5" 'not a sha; $(touch pwned)'
  [[ ! -e pwned && ! -e "$scratch/run-garbage/pwned" ]] || fail "GITHUB_EVENT_BEFORE was evaluated"
}

laptop() {
  make_remote
  local head
  head=$(push_commits 2 | tail -n 1)
  clone laptop
  in_run laptop "$ci/checkout_store.sh"
  in_run laptop "$ci/run_suite.sh"
  in_run laptop "$ci/publish_points.sh"
  expect_newest_points 2 "$head" "" ""
}

refused_off_main() {
  make_remote
  local sha log
  sha=$(push_commits 1)
  clone manual
  in_run manual "$ci/checkout_store.sh"
  for script in run_suite publish_points; do
    if log=$(in_run manual env CI=true GITHUB_ACTIONS=true GITHUB_REF=refs/heads/feature/x \
      GITHUB_EVENT_NAME=workflow_dispatch "GITHUB_SHA=$sha" "$ci/$script.sh" 2>&1); then
      fail "$script.sh ran a manual run on a feature branch"
    fi
    assert_contains "$log" "refusing to record performance points for refs/heads/feature/x (started by workflow_dispatch)" \
      "$script.sh's refusal"
    assert_contains "$log" "start the workflow on main" "$script.sh's refusal"
  done
  [[ ! -e "$scratch/manual/bench-data/points.jsonl" ]] || fail "a refused run recorded points"
  [[ -z "$(remote_tip)" ]] || fail "a refused run pushed"

  # In GitHub Actions, an unknown ref is refused too.
  if log=$(in_run manual env CI=true GITHUB_ACTIONS=true "$ci/run_suite.sh" 2>&1); then
    fail "run_suite.sh ran without GITHUB_REF in GitHub Actions"
  fi
  assert_contains "$log" "GITHUB_REF is not set" "the refusal without GITHUB_REF"
}

failed_scenario() {
  make_remote
  clone run
  in_run run "$ci/checkout_store.sh"
  local log
  if log=$(in_run run env FAKE_SUITE_FAIL=1 "$ci/run_suite.sh" 2>&1); then fail "run_suite.sh hid a failed scenario"; fi
  assert_contains "$log" "heapline-bench suite exited 1" "run_suite.sh's report"
  assert_eq "$(wc -l <"$scratch/run/build/ci/run-points.jsonl")" 2 "points kept from the scenarios that ran"
  # The workflow still publishes what was recorded.
  in_run run "$ci/publish_points.sh"
  assert_eq "$(remote_points | wc -l)" 2 "points published after a failed scenario"
}

# HEAPLINE_CATALOGUES: one suite per catalogue (the performance workflow adds
# the allocator entries to the five), every new line handed over.
several_catalogues() {
  make_remote
  clone run
  in_run run "$ci/checkout_store.sh"
  printf '%s\n' '{"scenarios": [{"name": "churn-1t"}, {"name": "python"}]}' >"$scratch/five.json"
  printf '%s\n' '{"scenarios": [{"name": "churn-1t-jemalloc"}]}' >"$scratch/allocators.json"
  in_run run env HEAPLINE_CATALOGUES="$scratch/five.json $scratch/allocators.json" "$ci/run_suite.sh"
  assert_eq "$(python3 -c 'import json, sys; print(" ".join(json.loads(l)["scenario"] for l in open(sys.argv[1])))' \
    "$scratch/run/build/ci/run-points.jsonl")" "churn-1t python churn-1t-jemalloc" "the points of both catalogues"
}

artifact_and_verdicts() {
  make_remote
  clone run
  in_run run "$ci/checkout_store.sh"
  in_run run "$ci/run_suite.sh" --only churn-1t,churn-4t,python
  in_run run "$ci/publish_points.sh"
  assert_eq "$(wc -l <"$scratch/run/build/ci/run-points.jsonl")" 3 "the run's own points, handed over"

  # No check subcommand yet: the step passes and says so.
  assert_contains "$(in_run run "$ci/check_regressions.sh" 2>&1)" "no check subcommand yet" "the verdict step"
  # Once heapline-bench has one, its status is the step's.
  cat >"$scratch/bench-with-check" <<'STUB'
#!/usr/bin/env bash
case "$1" in
  --help) printf 'Subcommands:\n  suite   Measure\n  check   The regression verdict\n' ;;
  check) echo "check $*"; exit 3 ;;
esac
STUB
  chmod +x "$scratch/bench-with-check"
  local status=0 log
  log=$(in_run run env HEAPLINE_BENCH="$scratch/bench-with-check" "$ci/check_regressions.sh" 2>&1) || status=$?
  assert_eq "$status" 3 "the verdict step's status with a check subcommand"
  assert_contains "$log" "check check --store $scratch/run/bench-data" "the check command"
}

# The workflow's jobs: measure in a checkout that cannot reach the remote
# (no token), hand the new points over as a file, publish them from a fresh
# checkout where no heapline-bench exists, while another run publishes too.
split_jobs() {
  make_remote
  clone first
  in_run first "$ci/checkout_store.sh"
  in_run first "$ci/run_suite.sh"
  in_run first "$ci/publish_points.sh"
  local sha env handoff before_ids log
  sha=$(push_commits 1)
  env=(CI=true GITHUB_ACTIONS=true GITHUB_REF=refs/heads/main GITHUB_EVENT_NAME=workflow_dispatch "GITHUB_SHA=$sha")

  clone measure
  git -C "$scratch/measure" checkout --quiet --detach "$sha"
  git -C "$scratch/measure" remote set-url origin "$scratch/unreachable.git"
  log=$(in_run measure env "${env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/checkout_store.sh" 2>&1)
  assert_contains "$log" "offline: taking origin's bench-data as last fetched" "the offline checkout"
  in_run measure env "${env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/run_suite.sh"
  handoff=$scratch/measure/build/ci/run-points.jsonl
  assert_eq "$(wc -l <"$handoff")" 2 "the points handed over"
  # The other machine of the matrix (arm64) measures the same commit; the
  # publishing job downloads every hand-off, each in a folder named after
  # its artifact (actions/download-artifact with a pattern).
  clone measure-arm64
  git -C "$scratch/measure-arm64" checkout --quiet --detach "$sha"
  git -C "$scratch/measure-arm64" remote set-url origin "$scratch/unreachable.git"
  in_run measure-arm64 env "${env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/checkout_store.sh" >/dev/null 2>&1
  in_run measure-arm64 env "${env[@]}" HEAPLINE_STORE_OFFLINE=1 "$ci/run_suite.sh"
  local downloaded=$scratch/downloaded
  mkdir -p "$downloaded/new-points-x86-64" "$downloaded/new-points-arm64"
  cp "$handoff" "$downloaded/new-points-x86-64/run-points.jsonl"
  cp "$scratch/measure-arm64/build/ci/run-points.jsonl" "$downloaded/new-points-arm64/run-points.jsonl"

  # Another run publishes before this one does.
  clone other
  in_run other "$ci/checkout_store.sh"
  in_run other "$ci/run_suite.sh"
  in_run other "$ci/publish_points.sh"
  before_ids=$(remote_points | run_ids /dev/stdin | sort)

  for attempt in publish publish-again; do
    clone "$attempt"
    in_run "$attempt" env "${env[@]}" HEAPLINE_BENCH="$scratch/no-heapline-bench" HEAPLINE_NEW_POINTS="$downloaded" \
      "$ci/checkout_store.sh"
    in_run "$attempt" env "${env[@]}" HEAPLINE_BENCH="$scratch/no-heapline-bench" HEAPLINE_NEW_POINTS="$downloaded" \
      "$ci/publish_points.sh"
  done
  assert_eq "$(remote_points | wc -l)" 8 "points on the remote after two runs (one of two machines) and a rerun of the publish"
  assert_eq "$(remote_points | run_ids /dev/stdin | sort)" \
    "$(sort <(printf '%s\n' "$before_ids") <(run_ids "$downloaded/new-points-x86-64/run-points.jsonl") \
      <(run_ids "$downloaded/new-points-arm64/run-points.jsonl"))" \
    "the remote's points: the earlier ones and both machines' handed-over ones, each once"
  [[ "$(remote_points | head -n 4 | run_ids /dev/stdin | sort)" == "$before_ids" ]] ||
    fail "the earlier points were rewritten"

  # Where a heapline-bench is built, a malformed hand-off is refused by its
  # validate (the one reader); nothing is pushed. (The workflow's publishing
  # job has none: the measuring job validated the lines it handed over, and
  # the site job validates the store as published.)
  printf '%s\n' '{"scenario": "churn-1t", "overhead": 0.1}' >"$scratch/bad-points.jsonl"
  clone publish-bad
  local tip status=0
  tip=$(remote_tip)
  in_run publish-bad env "${env[@]}" "$ci/checkout_store.sh"
  log=$(in_run publish-bad env "${env[@]}" HEAPLINE_NEW_POINTS="$scratch/bad-points.jsonl" "$ci/publish_points.sh" 2>&1) ||
    status=$?
  assert_eq "$status" 1 "the publish of a malformed point"
  assert_contains "$log" "points.jsonl:9: missing" "validate's report"
  assert_eq "$(remote_tip)" "$tip" "the remote after a refused publish"
}

"$case_name"
echo "github_env $case_name: ok"
