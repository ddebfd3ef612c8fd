#!/usr/bin/env bash
# tools/ci/publish_points.sh
#
# Publishes the points appended to the store (a worktree of the bench-data
# branch, see checkout_store.sh): validates every line, commits the new ones
# and pushes. When the push is rejected because another run pushed first, it
# fetches the remote branch, appends to the remote's file the lines of ours
# that the remote does not have yet, validates again and pushes again, a
# bounded number of times. So neither side's points are lost, none is
# recorded twice, and no existing line is ever rewritten.
#
# Where a heapline-bench is built (a laptop, the tests), a malformed line (in
# ours or in the remote's file) stops the publish before anything is pushed,
# with `FILE:LINE: reason` from `heapline-bench validate`, the one reader of
# the store. The workflow's publishing job builds and runs nothing but git
# (it holds the write token): there the points were validated by the same
# `heapline-bench validate` in the measuring job before the hand-off, this
# script only appends whole lines to what the branch holds, and the site job
# validates the store as published.
#
# Environment, besides tools/ci/common.sh's: HEAPLINE_NEW_POINTS (points
# measured elsewhere, the measuring jobs' hand-off: a file, or a directory
# whose .jsonl files, one per measuring machine, are taken in the order of
# their paths; their lines that the store lacks are appended first),
# HEAPLINE_PUSH_ATTEMPTS (default 5),
# HEAPLINE_PUSH_BACKOFF_S (seconds of the first wait between attempts, growing
# with each; default 2).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

refuse_unless_main
new_points=${HEAPLINE_NEW_POINTS:-}
handoffs=()
if [[ -d "$new_points" ]]; then
  while IFS= read -r -d '' handoff; do handoffs+=("$handoff"); done < <(
    find "$new_points" -type f -name '*.jsonl' -print0 | LC_ALL=C sort -z)
  ((${#handoffs[@]} > 0)) || die "HEAPLINE_NEW_POINTS names the directory $new_points, which holds no .jsonl file of points"
elif [[ -f "$new_points" ]]; then
  handoffs=("$new_points")
elif [[ -n "$new_points" ]]; then
  die "HEAPLINE_NEW_POINTS names $new_points, which is neither a file nor a directory"
fi
attempts=${HEAPLINE_PUSH_ATTEMPTS:-5}
backoff_s=${HEAPLINE_PUSH_BACKOFF_S:-2}
[[ "$attempts" =~ ^[1-9][0-9]*$ ]] || die "HEAPLINE_PUSH_ATTEMPTS must be a positive integer, got '$attempts'"
[[ "$backoff_s" =~ ^[0-9]+$ ]] || die "HEAPLINE_PUSH_BACKOFF_S must be a whole number of seconds, got '$backoff_s'"

[[ -e "$store_dir/.git" ]] || die "$store_dir is not a checkout of $store_branch (run tools/ci/checkout_store.sh first)"
store_dir=$(cd "$store_dir" && pwd)
[[ "$(git -C "$store_dir" symbolic-ref --quiet HEAD || true)" == "refs/heads/$store_branch" ]] ||
  die "$store_dir is not on the $store_branch branch"
points=$store_dir/$points_file_name
remote_branch=refs/remotes/$remote/$store_branch
store_git() { git -C "$store_dir" "$@"; }

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# validate_points DIR SHOWN_AS: `heapline-bench validate` on DIR's
# points.jsonl, its report naming the file SHOWN_AS; nothing where no
# heapline-bench is built (said once).
validate_points() {
  local dir=$1 shown_as=$2 report
  [[ -f "$dir/$points_file_name" ]] || return 0
  if [[ ! -x "$bench" ]]; then
    if [[ -z "${said_not_validated:-}" ]]; then
      say "no heapline-bench here ($bench): the lines are appended as the measuring job validated them; the site job validates the published store"
      said_not_validated=1
    fi
    return 0
  fi
  if ! report=$("$bench" validate --store "$dir" 2>&1); then
    printf '%s\n' "${report//"$dir/$points_file_name"/"$shown_as"}" >&2
    die "$shown_as has malformed lines (listed above): nothing was published. A point is never dropped or rewritten silently: fix $points_file_name on the $store_branch branch by hand."
  fi
}

# `git show REV:points.jsonl`, empty when REV or the file does not exist.
committed_points() {
  store_git cat-file -e "$1:$points_file_name" 2>/dev/null || return 0
  store_git show "$1:$points_file_name"
}

# Lines of file $1 that are not in file $2, in order, each once: whole lines
# compared byte for byte (LC_ALL=C), never parsed.
lines_missing_from() {
  LC_ALL=C awk -v present_file="$2" '
    BEGIN { while ((getline line < present_file) > 0) present[line] = 1 }
    $0 != "" && !($0 in present) { present[$0] = 1; print }' "$1"
}

# The commit message names the measured commit and the workflow run when
# GitHub gives them; the points themselves say the rest (no copy of the
# store's reader here).
commit_points() {
  local count=$1 message
  message="Record $count point(s)"
  [[ -z "${GITHUB_SHA:-}" ]] || message+=" for $GITHUB_SHA"
  [[ -z "${GITHUB_RUN_ID:-}" ]] || message+=" (workflow run $GITHUB_RUN_ID)"
  store_git add -- "$points_file_name"
  git_commit "$store_dir" --quiet -m "$message"
}

# The hand-off: the measured lines the store does not have yet, appended as
# they are (a rerun of the publishing job appends nothing twice).
for handoff in "${handoffs[@]}"; do
  touch "$points"
  lines_missing_from "$handoff" "$points" >"$scratch/handed"
  if [[ -s "$scratch/handed" ]]; then
    [[ ! -s "$points" || -z "$(tail -c 1 "$points")" ]] || printf '\n' >>"$points"
    cat "$scratch/handed" >>"$points"
  fi
  say "$(grep -c . "$scratch/handed" || true) of the $(grep -c . "$handoff" || true) point(s) of $handoff appended to the store"
done

validate_points "$store_dir" "$points"

# Append-only: the file must be what the branch holds plus new lines.
committed_points HEAD >"$scratch/committed"
committed_bytes=$(wc -c <"$scratch/committed")
if [[ -f "$points" ]]; then
  cmp -s -n "$committed_bytes" "$scratch/committed" "$points" ||
    die "$points is not the committed store with lines appended (lines were changed or removed); refusing to publish"
  tail -c "+$((committed_bytes + 1))" "$points" >"$scratch/new"
else
  [[ "$committed_bytes" == 0 ]] || die "$points was deleted; refusing to publish"
  : >"$scratch/new"
fi
new_count=$(grep -c . "$scratch/new" || true)
if ((new_count > 0)); then
  commit_points "$new_count"
  say "committed $new_count new point(s) to $store_branch"
fi

# Push first: the store was fetched at checkout, so usually nobody pushed in
# between. A rejection means someone did; then fetch and re-apply.
for ((attempt = 1; attempt <= attempts; attempt++)); do
  if push_log=$(store_git push --porcelain "$remote" "HEAD:refs/heads/$store_branch" 2>&1); then
    # --porcelain flags a ref that was already up to date with "=".
    if grep -q '^=' <<<"$push_log"; then
      say "nothing to publish: $remote has every point of the store"
      exit 0
    fi
    say "published to $remote $store_branch at $(store_git rev-parse --short HEAD) ($(wc -l <"$points") point(s) in all)"
    exit 0
  fi
  printf '%s\n' "$push_log" >&2
  ((attempt < attempts)) || die "push to $remote $store_branch still rejected after $attempts attempts; the points are committed locally in $store_dir"
  wait_s=$((backoff_s * attempt + (backoff_s > 0 ? RANDOM % (backoff_s + 1) : 0)))
  say "push rejected (attempt $attempt of $attempts); fetching $remote $store_branch and retrying in ${wait_s}s"
  sleep "$wait_s"

  store_git fetch --quiet "$remote" "+refs/heads/$store_branch:$remote_branch" ||
    die "cannot fetch $store_branch from $remote after a rejected push"
  if store_git merge-base --is-ancestor HEAD "$remote_branch"; then
    store_git merge --quiet --ff-only "$remote_branch"
    say "nothing to publish: $remote has every point of the store"
    exit 0
  fi
  if ! store_git merge-base --is-ancestor "$remote_branch" HEAD; then
    # Someone else pushed since we checked out: put our points on top of
    # theirs instead of merging (both only ever append to the same file).
    committed_points HEAD >"$scratch/ours"
    committed_points "$remote_branch" >"$scratch/theirs"
    lines_missing_from "$scratch/ours" "$scratch/theirs" >"$scratch/new"
    new_count=$(grep -c . "$scratch/new" || true)
    if ((new_count == 0)); then
      store_git reset --quiet --hard "$remote_branch"
      say "nothing to publish: $remote already has all our points"
      exit 0
    fi
    say "the remote moved on; re-applying our $new_count point(s) on top of it"
    # The result is checked before the store is touched, so a bad remote
    # line leaves our commit in place and the remote unchanged.
    mkdir -p "$scratch/candidate"
    candidate=$scratch/candidate/$points_file_name
    cp "$scratch/theirs" "$candidate"
    # A last line without its newline stays as it is; ours go on new lines.
    [[ ! -s "$candidate" || -z "$(tail -c 1 "$candidate")" ]] || printf '\n' >>"$candidate"
    cat "$scratch/new" >>"$candidate"
    validate_points "$scratch/candidate" "$remote/$store_branch:$points_file_name (with our points appended)"
    store_git reset --quiet --hard "$remote_branch"
    cp "$candidate" "$points"
    commit_points "$new_count"
  fi
done
