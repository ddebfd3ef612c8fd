#!/usr/bin/env bash
# compare_releases.sh REF [REF...] [-- COMPARE_OPTIONS...]
#
# Usually two refs or more (REF_A REF_B: releases, a base and a change); one
# ref alone is measured beside the builds the options add (--floor,
# --memusage, --heaptrack), as a first release is.
#
# A ref may be given as LABEL=REF ("base=origin/main"): LABEL then heads its
# column instead of the ref itself.
# Builds libheapline.so at each git ref (once per distinct source tree), in
# worktrees under build/compare/ (the checkout itself is never touched), builds the scenario
# programs and heapline-bench once from the current tree, and runs
# `heapline-bench compare` with those same binaries for every ref. Options
# after `--` go to compare (--floor, --memusage, --heaptrack, --rounds, --runs, --scale,
# --only, --json, --out).
#
# HEAPLINE_COMPARE_REPO names another repository whose refs are built
# (default: this checkout's); HEAPLINE_COMPARE_DIR the worktree directory.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/library.sh
source "$source_dir/tools/lib/library.sh"
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
repo=${HEAPLINE_COMPARE_REPO:-$source_dir}
compare_dir=${HEAPLINE_COMPARE_DIR:-$source_dir/build/compare}

refs=() labels=()
while (($# > 0)) && [[ "$1" != "--" ]]; do
  if [[ "$1" == ?*=?* ]]; then
    labels+=("${1%%=*}") refs+=("${1#*=}")
  else
    labels+=("$1") refs+=("$1")
  fi
  shift
done
[[ "${1:-}" == "--" ]] && shift
if ((${#refs[@]} < 1)); then
  echo "usage: tools/compare_releases.sh REF [REF...] [-- COMPARE_OPTIONS...]" >&2
  exit 2
fi

# Every ref must name a commit before anything is built.
commits=()
for ref in "${refs[@]}"; do
  if ! commit=$(git -C "$repo" rev-parse --verify --quiet "$ref^{commit}"); then
    echo "compare_releases: '$ref' is not a commit of this repository" >&2
    exit 1
  fi
  commits+=("$commit")
done

HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh" >/dev/null

mkdir -p "$compare_dir"
git -C "$repo" worktree prune
lib_args=()
for i in "${!refs[@]}"; do
  ref=${refs[$i]} commit=${commits[$i]}
  # Keyed by the commit's tree: refs with the same sources (a merge that
  # changed nothing, a tag on the same commit) share one build.
  tree=$(git -C "$repo" rev-parse "$commit^{tree}")
  worktree=$compare_dir/src-$tree
  libdir=$(comparison_build "$compare_dir" "$repo" "$commit")
  if [[ ! -d "$worktree" ]]; then
    git -C "$repo" worktree add --detach --force "$worktree" "$commit" >/dev/null 2>&1 || {
      echo "compare_releases: cannot check out '$ref' into $worktree" >&2
      exit 1
    }
  fi
  echo "compare_releases: building libheapline.so at $ref (${commit:0:12})" >&2
  if ! cmake -S "$worktree" -B "$libdir" -DCMAKE_BUILD_TYPE=Release -DHEAPLINE_BUILD_HARNESS=OFF \
      -DHEAPLINE_BUILD_TESTS=OFF -DHEAPLINE_BUILD_BENCHMARKS=OFF >"$libdir.log" 2>&1 ||
    ! cmake --build "$libdir" --parallel "$(nproc)" --target heapline_preload >>"$libdir.log" 2>&1; then
    echo "compare_releases: '$ref' does not build libheapline.so; see $libdir.log:" >&2
    tail -n 5 "$libdir.log" >&2
    exit 1
  fi
  lib=$(built_library "$libdir") || { echo "compare_releases: no libheapline.so was built at '$ref'" >&2; exit 1; }
  lib_args+=(--build "${labels[$i]}=$lib")
done

exec "$build_dir/bin/heapline-bench" compare "${lib_args[@]}" "$@"
