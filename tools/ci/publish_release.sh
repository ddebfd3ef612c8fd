#!/usr/bin/env bash
# tools/ci/publish_release.sh TAG DIR
#
# Attaches what tools/ci/build_release.sh made in DIR to the GitHub release of
# TAG, with the GitHub CLI (gh, GH_TOKEN and GH_REPO from the workflow): the
# package (heapline_X.Y.Z_ARCH.deb), the comparison table
# (heapline-X.Y.Z-comparison.md) and its raw data (.json), and notes.md as
# the release's text. The release is made when there is none; a run again
# (a re-run workflow) replaces its assets and text rather than adding a
# second copy. Nothing else is run: no build, no install.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

(($# == 2)) || die "usage: tools/ci/publish_release.sh TAG DIR"
tag=$1 dir=$2
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "'$tag' is not a release tag (vX.Y.Z)"
version=${tag#v}
command -v gh >/dev/null || die "the GitHub CLI (gh) is not installed"

# take PATTERN: appends to `files` the one file of DIR that PATTERN names;
# refuses (here, never in a subshell that would only end itself) when there
# is none or more than one.
files=()
take() {
  local found=()
  shopt -s nullglob
  # shellcheck disable=SC2206 # the pattern is a glob, on purpose
  found=($dir/$1)
  shopt -u nullglob
  ((${#found[@]} == 1)) || die "expected one $1 in $dir, found ${#found[@]}: is it build_release.sh's output for $tag?"
  files+=("${found[0]}")
}
take "heapline_${version}_*.deb"
take "heapline-$version-comparison.md"
take "heapline-$version-comparison.json"
take notes.md
assets=("${files[@]:0:3}") notes=${files[3]}

if gh release view "$tag" >/dev/null 2>&1; then
  say "release $tag exists: replacing its assets and text"
  gh release upload "$tag" "${assets[@]}" --clobber
  gh release edit "$tag" --notes-file "$notes"
else
  say "making the release $tag"
  # --verify-tag: the tag must already be on GitHub (it was pushed).
  gh release create "$tag" "${assets[@]}" --verify-tag --title "heapline $version" --notes-file "$notes"
fi
say "release $tag: $(for asset in "${assets[@]}"; do printf '%s ' "$(basename "$asset")"; done)"
