#!/usr/bin/env bash
# pull_request_gate_test.sh BIN_DIR
#
# The pull-request workflow's script (tools/ci/compare_pull_request.sh) with
# the real heapline-bench judging, and stand-ins for what takes an hour: the
# building and timing (tools/compare_releases.sh, which here only places a
# libheapline.so per commit) and callgrind (a valgrind whose count depends on
# the library preloaded: 1000 instructions without one, 1100 with the base's,
# the pull request's as the case sets it). The script must fail on an
# instruction regression, naming the scenario and the change, and pass a
# change within the threshold, an unchanged figure and an improvement.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bin_dir=$(cd "$1" && pwd)
export HEAPLINE_BENCH=$bin_dir/heapline-bench
[[ -x "$HEAPLINE_BENCH" ]] || fail "no heapline-bench at $HEAPLINE_BENCH"
unset GITHUB_STEP_SUMMARY HEAPLINE_PR_DIR HEAPLINE_PR_ONLY

# The script as it is checked out, beside a compare_releases.sh that builds
# and times nothing, placing each library where the real one builds it
# (tools/lib/library.sh's comparison_build, shared by both scripts).
tree=$scratch/tree
mkdir -p "$tree/tools/ci"
cp "$ci/compare_pull_request.sh" "$ci/common.sh" "$tree/tools/ci/"
mkdir -p "$tree/tools/lib"
cp "$ci/../lib/library.sh" "$tree/tools/lib/"
cat >"$tree/tools/compare_releases.sh" <<STUB
#!/usr/bin/env bash
set -euo pipefail
source "$tree/tools/lib/library.sh"
while [[ "\$1" != "--" ]]; do
  build=\$(comparison_build "\$HEAPLINE_COMPARE_DIR" . "\${1#*=}")
  mkdir -p "\$build/interposer"
  cp "$bin_dir/libheapline.so" "\$build/interposer/libheapline.so"
  shift
done
echo "| Scenario | base | pull request |"
STUB
chmod +x "$tree/tools/compare_releases.sh"

# A repository with the base and the pull request's commit, whose sources
# differ (commits with the same tree share one build).
repo=$scratch/repo
git init --quiet -b main "$repo"
echo base >"$repo/source"
git -C "$repo" add source
dev_git -C "$repo" commit --quiet -m base
echo "pull request" >"$repo/source"
dev_git -C "$repo" commit --quiet -am "pull request"
base=$(git -C "$repo" rev-parse HEAD~1)
head=$(git -C "$repo" rev-parse HEAD)
base_tree=$(git -C "$repo" rev-parse "$base^{tree}")
head_tree=$(git -C "$repo" rev-parse "$head^{tree}")

support=$(cd "$(dirname "${BASH_SOURCE[0]}")/../support" && pwd)
cat >"$scratch/bin/valgrind" <<STUB
#!/usr/bin/env bash
case "\${LD_PRELOAD:-}" in
  */build-$base_tree/*) n=1100 ;;
  */build-$head_tree/*) n=\$(cat "$scratch/head-count") ;;
  "") n=1000 ;;
  *) echo "unexpected LD_PRELOAD=\$LD_PRELOAD" >&2; exit 1 ;;
esac
[[ "\$n" == fail ]] && exit 3
"$support/callgrind_profile.sh" "\$@"
echo "==1== Collected : \$n" >&2
STUB
chmod +x "$scratch/bin/valgrind"

# pull_request HEAD_COUNT: runs the script; sets status, log (its output)
# and summary (what it appended to the job's summary).
pull_request() {
  echo "$1" >"$scratch/head-count"
  : >"$scratch/step-summary"
  status=0
  log=$(HEAPLINE_REPO_DIR=$repo HEAPLINE_BUILD_DIR=$scratch/build HEAPLINE_PR_ONLY=churn-1t \
    GITHUB_STEP_SUMMARY=$scratch/step-summary "$tree/tools/ci/compare_pull_request.sh" "$base" "$head" 2>&1) ||
    status=$?
  summary=$(cat "$scratch/step-summary")
  [[ -z "${DEBUG:-}" ]] || printf "%s\n" "$log" >&2
}

# +15% against the base's +10%: 5 points above a threshold of 0.2.
pull_request 1150
assert_eq "$status" 1 "the status on an instruction regression"
# shellcheck disable=SC2016 # the backquotes are Markdown
assert_contains "$summary" '| `churn-1t` | `malloc_churn 1 200000` | +10.00% | +15.00% | +5.00 pts | ±0.20 pts | **regression** |' \
  "the summary's verdict table"
# shellcheck disable=SC2016
assert_contains "$summary" 'Regression: `churn-1t` costs +15.00% instructions against the base'"'"'s +10.00%: +5.00 pts' \
  "the summary's reason"
assert_contains "$log" "error: the pull request regresses the instruction figure: Regression: \`churn-1t\`" "the error"
assert_contains "$summary" "### Wall clock and CPU time" "the timed figures in the summary"

# Unchanged, within the threshold (+0.1 point), improved: the check passes.
for count in 1100 1101 1050; do
  pull_request "$count"
  assert_eq "$status" 0 "the status with $count instructions against the base's 1100 ($log)"
done
assert_contains "$summary" "**improvement**" "the verdict on 1050"

# A count that fails is an error of its own, not a verdict.
pull_request fail
assert_eq "$status" 1 "the status when callgrind fails"
assert_contains "$log" "heapline-bench instructions failed (exit 1)" "the error when callgrind fails"

# compare_pull_request.sh refuses what is not a commit, before building.
status=0
log=$("$ci/compare_pull_request.sh" 'no-such-ref' 2>&1) || status=$?
assert_eq "$status" 1 "the status for a base that is not a commit"
assert_contains "$log" "'no-such-ref' is not a commit" "the refusal"
echo "pull request gate: ok"
