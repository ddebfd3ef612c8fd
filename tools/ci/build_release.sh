#!/usr/bin/env bash
# tools/ci/build_release.sh TAG
#
# Makes what a release attaches, for the pushed tag TAG (vX.Y.Z), in
# $HEAPLINE_RELEASE_DIR (default build/release-assets):
#   heapline_X.Y.Z_ARCH.deb          the Debian package (cpack -G DEB)
#   heapline-X.Y.Z-comparison.md     the release comparison's table
#   heapline-X.Y.Z-comparison.json   its raw data (heapline-comparison/1)
#   notes.md                         the release's text: its CHANGELOG.md
#                                    section and the table
# The comparison is the user's method (tools/compare_releases.sh): the
# release's libheapline.so against the previous release's (the newest
# vX.Y.Z tag that is an ancestor of TAG), in three rounds that alternate
# them, beside the forwarding-only floor, glibc's libmemusage.so and
# heaptrack. The first release has no previous tag: it is measured beside
# the floor and the peers alone.
#
# Refused before anything is built: a TAG that is not vX.Y.Z, that is not
# the version CMakeLists.txt holds, or whose version has no dated section in
# CHANGELOG.md.
#
# Environment, besides tools/ci/common.sh's: HEAPLINE_RELEASE_SCALE (the
# comparison's --scale, default 0.25, as the docs' table), HEAPLINE_RELEASE_RUNS
# (default 10), HEAPLINE_RELEASE_ONLY (compare's --only, default every
# scenario). The build directory (HEAPLINE_BUILD_DIR) defaults to
# build/release-package, configured for /usr without the tests.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

(($# == 1)) || die "usage: tools/ci/build_release.sh TAG"
tag=$1
[[ "$tag" =~ ^v([0-9]+)\.([0-9]+)\.([0-9]+)$ ]] || die "'$tag' is not a release tag (vX.Y.Z)"
version=${tag#v}
cd "$repo_dir"
git rev-parse --verify --quiet "refs/tags/$tag^{commit}" >/dev/null || die "no tag $tag in $repo_dir"
# The version is written once, in CMakeLists.txt: the tag must be it.
cmake_version=$(project_version "$repo_dir/CMakeLists.txt")
[[ "$cmake_version" == "$version" ]] ||
  die "the tag $tag is not the version CMakeLists.txt holds (${cmake_version:-none}): set project(heapline VERSION $version) first"
notes=$(changelog_section "$repo_dir/CHANGELOG.md" "$version") ||
  die "CHANGELOG.md has no dated section '## [$version] - YYYY-MM-DD': say what the release brings"

# The previous release: the newest vX.Y.Z tag before this one in its history.
previous=""
while IFS= read -r candidate; do
  if [[ "$candidate" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ && "$candidate" != "$tag" ]]; then
    previous=$candidate
    break
  fi
done < <(git tag --list 'v*' --merged "$tag" --sort=-version:refname)

out=${HEAPLINE_RELEASE_DIR:-$repo_dir/build/release-assets}
package_build=${HEAPLINE_BUILD_DIR:-$repo_dir/build/release-package}
rm -rf "$out"
mkdir -p "$out"

say "building the package of $tag"
if [[ ! -f "$package_build/CMakeCache.txt" ]]; then
  cmake -S "$repo_dir" -B "$package_build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DHEAPLINE_BUILD_TESTS=OFF -DHEAPLINE_BUILD_BENCHMARKS=OFF >/dev/null
fi
HEAPLINE_BUILD_DIR=$package_build "$ci_source_dir/tools/build.sh" >/dev/null
(cd "$package_build" && cpack -G DEB -B "$out/cpack" >"$out/cpack.log" 2>&1) ||
  { cat "$out/cpack.log" >&2; die "cpack could not make the package"; }
shopt -s nullglob
packages=("$out"/cpack/heapline_"$version"_*.deb)
shopt -u nullglob
((${#packages[@]} == 1)) || die "cpack made no heapline_${version}_ARCH.deb (see $out/cpack.log)"
mv "${packages[0]}" "$out/"
package=$out/$(basename "${packages[0]}")
rm -rf "$out/cpack" "$out/cpack.log"

refs=()
if [[ -n "$previous" ]]; then
  refs=("$previous" "$tag")
  say "comparing $tag with the previous release $previous"
else
  refs=("$tag")
  say "$tag is the first release: measured beside the floor and the peers alone"
fi
only=()
[[ -z "${HEAPLINE_RELEASE_ONLY:-}" ]] || only=(--only "$HEAPLINE_RELEASE_ONLY")
comparison=$out/heapline-$version-comparison
HEAPLINE_BUILD_DIR=$package_build HEAPLINE_COMPARE_DIR=$package_build/compare \
  "$ci_source_dir/tools/compare_releases.sh" "${refs[@]}" -- --floor --memusage --heaptrack --rounds 3 \
  --runs "${HEAPLINE_RELEASE_RUNS:-10}" --scale "${HEAPLINE_RELEASE_SCALE:-0.25}" "${only[@]}" \
  --json "$comparison.json" --out "$out/generated" >/dev/null ||
  die "the release comparison failed"
mv "$out/generated/release-comparison.md" "$comparison.md"
rm -rf "$out/generated"

{
  printf '%s\n\n' "$notes"
  echo "### Install"
  echo
  echo "On Debian 12 (or a derivative of it), as root: \`apt install ./$(basename "$package")\`; \`heapline --version\`"
  echo "says which library it preloads. \`cmake --install\` of a build puts the same files under any prefix."
  echo
  if [[ -n "$previous" ]]; then
    echo "### Overhead against $previous"
  else
    echo "### Overhead"
  fi
  echo
  cat "$comparison.md"
} >"$out/notes.md"
say "release assets of $tag in $out: $(cd "$out" && echo *)"
