#!/usr/bin/env bash
# tools/ci/checkout_store.sh
#
# Checks out the bench-data branch (the history store) as a git worktree at
# $HEAPLINE_STORE_DIR (default: bench-data/ in the checkout), so the suite
# appends to it in place and publish_points.sh commits and pushes from it.
# A worktree shares the checkout's configuration, so the credentials that
# actions/checkout left there also serve the push.
#
# When the remote has no bench-data branch yet, an orphan branch is started
# with the README of bench-data/ on main; the first publish pushes it.
#
# HEAPLINE_STORE_OFFLINE=1: do not reach the remote; take its branch as the
# last fetch left it (refs/remotes/REMOTE/bench-data, which actions/checkout
# with fetch-depth: 0 fetches). The jobs that measure or render run so, with
# no token in the checkout; only the job that publishes talks to the remote.
# Environment: see tools/ci/common.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

cd "$repo_dir"
git rev-parse --git-dir >/dev/null 2>&1 || die "$repo_dir is not a git checkout"
git remote get-url "$remote" >/dev/null 2>&1 || die "no git remote named '$remote' (set HEAPLINE_REMOTE)"

local_branch=refs/heads/$store_branch
remote_branch=refs/remotes/$remote/$store_branch
mkdir -p "$(dirname "$store_dir")"
store_dir=$(cd "$(dirname "$store_dir")" && pwd)/$(basename "$store_dir")

# A store directory deleted by hand leaves its worktree registered.
git worktree prune

ref_exists() { git rev-parse --verify --quiet "$1^{commit}" >/dev/null; }

# Remote state first: everything below decides from it.
remote_has_branch=false
if [[ "${HEAPLINE_STORE_OFFLINE:-0}" == 1 ]]; then
  if ref_exists "$remote_branch"; then
    remote_has_branch=true
    say "offline: taking $remote's $store_branch as last fetched ($(git rev-parse --short "$remote_branch"))"
  else
    say "offline: no $remote_branch was fetched; taking the store as empty"
  fi
elif git ls-remote --exit-code --heads "$remote" "$store_branch" >/dev/null; then
  remote_has_branch=true
  git fetch --quiet "$remote" "+$local_branch:$remote_branch"
else
  status=$?
  # 2 is ls-remote's "no such ref"; anything else is a failure to reach it.
  ((status == 2)) || die "cannot read the branches of remote '$remote' (git ls-remote exited $status)"
fi

describe_store() {
  local points lines=0
  points=$(store_points_path)
  [[ -f "$points" ]] && lines=$(wc -l <"$points")
  say "store $store_dir is on $store_branch at $(git -C "$store_dir" rev-parse --short HEAD), $lines point(s)"
}

# Already checked out (a laptop's second run): bring it up to date when
# that is a fast-forward, otherwise leave it for publish_points.sh, which
# re-applies local points on top of the remote.
if [[ -e "$store_dir/.git" ]] &&
  [[ "$(git -C "$store_dir" rev-parse --path-format=absolute --git-common-dir)" == "$(git rev-parse --path-format=absolute --git-common-dir)" ]]; then
  current=$(git -C "$store_dir" symbolic-ref --quiet HEAD || true)
  [[ "$current" == "$local_branch" ]] ||
    die "$store_dir is a worktree of this checkout but is on '${current:-a detached HEAD}', not $store_branch"
  if $remote_has_branch && git -C "$store_dir" merge-base --is-ancestor HEAD "$remote_branch"; then
    if [[ -z "$(git -C "$store_dir" status --porcelain --untracked-files=no)" ]]; then
      git -C "$store_dir" merge --quiet --ff-only "$remote_branch"
    else
      say "$store_dir has points not committed yet; leaving it behind $remote (publish_points.sh re-applies them)"
    fi
  fi
  describe_store
  exit 0
fi

# The directory may hold only what main tracks there (its README); anything
# else is someone's local history, which a checkout must not destroy.
store_readme=
if [[ -d "$store_dir" ]]; then
  while IFS= read -r -d '' entry; do
    tracked_clean=false
    if git ls-files --error-unmatch -- "$entry" >/dev/null 2>&1 && git diff --quiet HEAD -- "$entry"; then
      tracked_clean=true
    fi
    $tracked_clean || die "$entry is in the way of the store checkout and is not a file main tracks unchanged; move it away (local points belong on the $store_branch branch) or set HEAPLINE_STORE_DIR"
  done < <(find "$store_dir" -mindepth 1 -print0)
  if [[ -f "$store_dir/README.md" ]]; then
    store_readme=$(mktemp)
    trap 'rm -f "$store_readme"' EXIT
    cp "$store_dir/README.md" "$store_readme"
  fi
  # Only tracked, unchanged files were here: git can restore them at will.
  rm -rf "$store_dir"
fi

if $remote_has_branch; then
  if ref_exists "$local_branch"; then
    if git merge-base --is-ancestor "$local_branch" "$remote_branch"; then
      git worktree add --quiet -B "$store_branch" "$store_dir" "$remote_branch"
    else
      say "local $store_branch has commits the remote lacks; keeping them (publish_points.sh re-applies them on top of $remote)"
      git worktree add --quiet "$store_dir" "$store_branch"
    fi
  else
    git worktree add --quiet --track -b "$store_branch" "$store_dir" "$remote_branch"
  fi
elif ref_exists "$local_branch"; then
  git worktree add --quiet "$store_dir" "$store_branch"
else
  say "remote '$remote' has no $store_branch branch: starting it as an orphan branch"
  git worktree add --quiet --detach --no-checkout "$store_dir"
  git -C "$store_dir" checkout --quiet --orphan "$store_branch"
  # The new worktree's index holds main's tree; the store starts empty.
  git -C "$store_dir" read-tree --empty
  if [[ -n "$store_readme" ]]; then
    cp "$store_readme" "$store_dir/README.md"
  else
    printf '# bench-data\n\nThe history of heapline'"'"'s overhead: one JSON point per line in %s.\n' \
      "$points_file_name" >"$store_dir/README.md"
  fi
  git -C "$store_dir" add README.md
  git_commit "$store_dir" --quiet -m "Start the history store of heapline's overhead"
fi

# main tracks bench-data/README.md: keep it on disk even when the branch's
# own README is missing, so main's checkout stays clean.
if [[ -n "$store_readme" && ! -e "$store_dir/README.md" ]]; then
  cp "$store_readme" "$store_dir/README.md"
fi
describe_store
