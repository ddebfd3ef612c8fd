#!/usr/bin/env bash
# publish_test.sh CASE [BIN_DIR]
#
# checkout_store.sh, run_suite.sh and publish_points.sh against a local bare
# repository standing in for GitHub. heapline-bench is the fake of
# fake_heapline_bench.py, except in real_validate, which uses BIN_DIR's.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case_name=$1 bin_dir=${2:-}

# measure_and_publish NAME [SUITE OPTIONS]: one whole workflow run in the
# checkout NAME (made on first use).
checkout_and_measure() {
  local name=$1
  shift
  [[ -d "$scratch/$name" ]] || clone "$name"
  in_run "$name" "$ci/checkout_store.sh"
  in_run "$name" "$ci/run_suite.sh" "$@"
}
publish() { in_run "$1" "$ci/publish_points.sh"; }

first_run() {
  make_remote
  checkout_and_measure run1
  [[ -z "$(remote_tip)" ]] || fail "the branch exists before the first publish"
  publish run1
  assert_eq "$(remote_points | wc -l)" 2 "points on the remote after the first run"
  assert_eq "$(git --git-dir="$remote_git" rev-list --count bench-data)" 2 "commits on bench-data (start + points)"
  assert_eq "$(git --git-dir="$remote_git" ls-tree --name-only bench-data | tr '\n' ' ')" "README.md points.jsonl " \
    "files on bench-data"
  git --git-dir="$remote_git" show bench-data:README.md | cmp -s - "$source_dir/bench-data/README.md" ||
    fail "the branch's README is not main's bench-data/README.md"
  # An orphan branch: no history of main in it.
  [[ -z "$(git --git-dir="$remote_git" merge-base main bench-data || true)" ]] || fail "bench-data shares history with main"
  # main's checkout is left as it was.
  assert_eq "$(git -C "$scratch/run1" status --porcelain)" "" "git status of main's checkout"
}

second_run_appends() {
  first_run
  local before
  before=$(remote_points)
  push_commits 1 >/dev/null
  checkout_and_measure run2 --only churn-1t,churn-4t,python
  publish run2
  assert_eq "$(remote_points | wc -l)" 5 "points after the second run"
  assert_eq "$(remote_points | head -n 2)" "$before" "the first run's lines, unchanged"
  assert_eq "$(git --git-dir="$remote_git" rev-list --count bench-data)" 3 "commits on bench-data"

  # A third run in the same checkout (a laptop's second run) reuses the store.
  push_commits 1 >/dev/null
  git -C "$scratch/run2" pull --quiet --ff-only
  checkout_and_measure run2
  publish run2
  assert_eq "$(remote_points | wc -l)" 7 "points after a run in an existing store"

  # Nothing new: nothing pushed.
  local tip
  tip=$(remote_tip)
  assert_contains "$(publish run2 2>&1)" "nothing to publish" "publishing nothing new"
  assert_eq "$(remote_tip)" "$tip" "bench-data after publishing nothing new"

  # The first run's checkout, behind by two publishes: checking the store
  # out again fast-forwards it, so its next publish is not rejected.
  git -C "$scratch/run1" pull --quiet --ff-only
  checkout_and_measure run1
  local log
  log=$(publish run1 2>&1)
  [[ "$log" != *"push rejected"* ]] || fail "a store checked out again was not up to date:"$'\n'"$log"
  assert_eq "$(remote_points | wc -l)" 9 "points after a run in an old store"
}

racing_publishers() {
  make_remote
  # Both runs check out before either pushes: both start the orphan branch.
  clone a
  clone b
  checkout_and_measure a
  checkout_and_measure b --only churn-1t,large-4t,python
  cp "$scratch/a/bench-data/points.jsonl" "$scratch/a-points"
  cp "$scratch/b/bench-data/points.jsonl" "$scratch/b-points"
  publish a
  local log
  log=$(publish b 2>&1) || fail "the second publisher failed:"$'\n'"$log"
  assert_contains "$log" "push rejected" "the second publisher's log"
  assert_contains "$log" "re-applying our 3 point(s)" "the second publisher's log"

  remote_points >"$scratch/remote-points"
  assert_eq "$(wc -l <"$scratch/remote-points")" 5 "points on the remote"
  assert_eq "$(run_ids "$scratch/remote-points" | sort)" "$(run_ids "$scratch/a-points" "$scratch/b-points" | sort)" \
    "the remote's points are both runs' points, each once"
  assert_eq "$(head -n 2 "$scratch/remote-points")" "$(cat "$scratch/a-points")" "the first publisher's lines come first"

  # Three more at once, truly concurrently, on top of the existing branch.
  local name pids=()
  for name in c d e; do
    push_commits 1 >/dev/null
    checkout_and_measure "$name"
  done
  for name in c d e; do
    HEAPLINE_PUSH_ATTEMPTS=10 publish "$name" >"$scratch/$name.log" 2>&1 &
    pids+=($!)
  done
  for name in "${pids[@]}"; do wait "$name" || fail "a concurrent publisher failed: $(cat "$scratch"/{c,d,e}.log)"; done
  remote_points >"$scratch/remote-points"
  assert_eq "$(wc -l <"$scratch/remote-points")" 11 "points after three concurrent publishers"
  assert_eq "$(run_ids "$scratch/remote-points" | sort -u | wc -l)" 11 "distinct points after three concurrent publishers"
  assert_eq "$(head -n 5 "$scratch/remote-points" | run_ids /dev/stdin)" "$(run_ids "$scratch/a-points" "$scratch/b-points")" \
    "the earlier points, unchanged"
}

# corrupt_remote [BENCH]: a malformed line on the remote stops the publish,
# before and after our checkout, and the remote stays as it was.
corrupt_remote() {
  first_run
  clone vandal
  git -C "$scratch/vandal" fetch --quiet origin bench-data:bench-data
  dev_git -C "$scratch/vandal" switch --quiet bench-data
  echo '{"scenario": "churn-1t", "overhead": 0.1' >>"$scratch/vandal/points.jsonl"
  dev_git -C "$scratch/vandal" commit --quiet -am "a truncated line"
  git -C "$scratch/vandal" push --quiet origin bench-data
  local tip log
  tip=$(remote_tip)

  # Already in the store when the run checks it out.
  checkout_and_measure late
  if log=$(publish late 2>&1); then fail "publish succeeded over a corrupt store:"$'\n'"$log"; fi
  assert_contains "$log" "$scratch/late/bench-data/points.jsonl:3:" "the error names file and line"
  assert_contains "$log" "nothing was published" "the error"
  assert_eq "$(remote_tip)" "$tip" "bench-data after the refused publish"

  # Arriving between our checkout and our push.
  dev_git -C "$scratch/vandal" reset --quiet --hard HEAD~1
  git -C "$scratch/vandal" push --quiet --force origin bench-data
  checkout_and_measure early
  dev_git -C "$scratch/vandal" reset --quiet --hard "$tip"
  git -C "$scratch/vandal" push --quiet --force origin bench-data
  if log=$(publish early 2>&1); then fail "publish succeeded over a corrupt remote:"$'\n'"$log"; fi
  assert_contains "$log" "origin/bench-data:points.jsonl (with our points appended):3:" "the error names file and line"
  assert_eq "$(remote_tip)" "$tip" "bench-data after the refused publish"
  # Our points are not lost: still committed in the run's store.
  assert_eq "$(git -C "$scratch/early/bench-data" show HEAD:points.jsonl | wc -l)" 4 "points kept in the refused run's store"
}

rewritten_line_refused() {
  first_run
  checkout_and_measure run2
  sed -i '1s/"overhead": [0-9.]*/"overhead": 0.5/' "$scratch/run2/bench-data/points.jsonl"
  local tip log
  tip=$(remote_tip)
  if log=$(publish run2 2>&1); then fail "publish accepted a changed line:"$'\n'"$log"; fi
  assert_contains "$log" "is not the committed store with lines appended" "the error"
  assert_eq "$(remote_tip)" "$tip" "bench-data after the refused publish"
}

store_in_the_way() {
  make_remote
  clone laptop
  echo '{"local": true}' >"$scratch/laptop/bench-data/points.jsonl"
  local log
  if log=$(in_run laptop "$ci/checkout_store.sh" 2>&1); then fail "checkout replaced local points"; fi
  assert_contains "$log" "points.jsonl is in the way" "the error"
  [[ -f "$scratch/laptop/bench-data/points.jsonl" ]] || fail "the local points were removed"
}

# The workflow's publishing job builds nothing: without a heapline-bench the
# lines are appended as the measuring job validated them, byte for byte,
# each once, and the script says it did not validate them.
without_bench() {
  make_remote
  checkout_and_measure run1
  local log
  log=$(HEAPLINE_BENCH=$scratch/no-heapline-bench publish run1 2>&1) || fail "publish without heapline-bench failed:"$'\n'"$log"
  assert_contains "$log" "no heapline-bench here" "the publish's log"
  assert_eq "$(remote_points)" "$(cat "$scratch/run1/bench-data/points.jsonl")" "the published lines"
  assert_eq "$(remote_points | wc -l)" 2 "points on the remote"
}

# The same publishing with the real heapline-bench's validate.
real_validate() {
  [[ -x "$bin_dir/heapline-bench" ]] || fail "no heapline-bench in '$bin_dir'"
  # Points from the fake suite, validated by the real heapline-bench: a
  # wrapper sends validate to it.
  cat >"$scratch/bench" <<WRAPPER
#!/usr/bin/env bash
if [[ "\$1" == validate ]]; then exec "$bin_dir/heapline-bench" "\$@"; fi
exec "$fake_bench" "\$@"
WRAPPER
  chmod +x "$scratch/bench"
  export HEAPLINE_BENCH=$scratch/bench
  corrupt_remote
}

"$case_name"
echo "publish $case_name: ok"
