#!/usr/bin/env bash
# release_test.sh CASE BUILD_DIR
#
# The release workflow (.github/workflows/release.yml) run on a fake tag
# pushed to a local bare repository: its package job
# (tools/ci/build_release.sh) with the real cpack on this build and the real
# heapline-bench compare, and stand-ins for what takes an hour or needs
# GitHub: the build (done: this build directory), compare_releases.sh's
# building of libheapline.so at each tag (here every tag's library is this
# build's, at a tiny scale), the GitHub CLI (gh: a release is a directory)
# and the GitHub API (a local HTTP server serving what gh attached). Checks
# what would be attached and what the site's release table reads.
#   with_previous  v0.4.0 then the release: its package, table, raw data and
#                  text against v0.4.0; published, then published again (a
#                  re-run replaces, never duplicates); the docs' release
#                  table is then the release's
#   first_release  no earlier tag: the release beside the floor and peers
#   refused        a tag that is not vX.Y.Z, not the version CMakeLists.txt
#                  holds, or without its CHANGELOG.md section: refused
#                  before anything is built; publish without the files
#   docs_fallback  before any release, or a release without its comparison,
#                  the docs keep their tracked table; an attached file that
#                  is not a comparison stops the site
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
case_name=$1
build_dir=$(cd "$2" && pwd)
bin_dir=$build_dir/bin
[[ -x "$bin_dir/heapline-bench" && -f "$build_dir/CPackConfig.cmake" ]] || fail "no configured build at $build_dir"
unset GITHUB_REPOSITORY GITHUB_API_URL GITHUB_TOKEN GH_TOKEN GH_REPO HEAPLINE_RELEASE_DIR HEAPLINE_RELEASE_ONLY \
  HEAPLINE_RELEASE_SCALE HEAPLINE_RELEASE_RUNS
# The version as the scripts read it (common.sh's project_version).
# shellcheck disable=SC2016 # the script's own variables
version=$(bash -c 'source "$1" && project_version "$2"' version "$ci/common.sh" "$source_dir/CMakeLists.txt")
[[ -n "$version" ]] || fail "no version in $source_dir/CMakeLists.txt"

# The scripts as they are checked out, beside stand-ins for the build (done:
# ctest runs after it) and for compare_releases.sh's builds of each tag.
tree=$scratch/tree
mkdir -p "$tree/tools/ci"
cp "$ci/build_release.sh" "$ci/publish_release.sh" "$ci/fetch_release_comparison.py" "$ci/common.sh" "$tree/tools/ci/"
cat >"$tree/tools/build.sh" <<STUB
#!/usr/bin/env bash
[[ "\$HEAPLINE_BUILD_DIR" == "$build_dir" ]] || { echo "build.sh: unexpected build directory \$HEAPLINE_BUILD_DIR" >&2; exit 1; }
STUB
cat >"$tree/tools/compare_releases.sh" <<STUB
#!/usr/bin/env bash
# Each tag's library is this build's; the options are the release's, kept
# for the test, then run at a tiny scale, one run a side, with the
# instruction counts left out (the release's take an hour, callgrind minutes).
set -euo pipefail
builds=()
while [[ "\$1" != "--" ]]; do
  git rev-parse --verify --quiet "\$1^{commit}" >/dev/null || { echo "compare_releases: '\$1' is not a commit" >&2; exit 1; }
  builds+=(--build "\$1=$bin_dir/libheapline.so")
  shift
done
shift
echo "\${builds[*]} -- \$*" >"$scratch/compare-arguments"
options=()
while ((\$# > 0)); do
  case "\$1" in
    --scale) options+=(--scale 0.0005); shift 2 ;;
    --runs) options+=(--runs 1); shift 2 ;;
    *) options+=("\$1"); shift ;;
  esac
done
exec "$bin_dir/heapline-bench" compare "\${builds[@]}" "\${options[@]}" --no-instructions
STUB
chmod +x "$tree/tools/build.sh" "$tree/tools/compare_releases.sh"

# The project on "GitHub": main with the version and the changelog of this
# tree, and tags pushed to it.
make_remote
cp "$source_dir/CMakeLists.txt" "$source_dir/CHANGELOG.md" "$scratch/developer/"
mkdir -p "$scratch/developer/docs"
cp "$source_dir/docs/release-comparison.json" "$scratch/developer/docs/"
dev_git -C "$scratch/developer" add CMakeLists.txt CHANGELOG.md docs
dev_git -C "$scratch/developer" commit --quiet -m "heapline $version"
git -C "$scratch/developer" push --quiet origin main
# tag NAME [COMMIT]: a tag pushed, as a release is started.
tag() {
  dev_git -C "$scratch/developer" tag -a -m "$1" "$1" "${2:-HEAD}"
  git -C "$scratch/developer" push --quiet origin "$1"
}

# The stand-in GitHub: a release is a directory (its assets, its text),
# served with the API's answer for the latest release by a local HTTP server.
github=$scratch/github
mkdir -p "$github/repos/owner/heapline/releases"
cat >"$scratch/bin/gh" <<STUB
#!/usr/bin/env bash
# gh release view|create|upload|edit, as the release workflow calls them.
set -euo pipefail
echo "gh \$*" >>"$scratch/gh-calls"
[[ "\$1" == release ]] || { echo "gh: unexpected \$*" >&2; exit 1; }
command=\$2 tag=\$3
shift 3
release=$github/download/\$tag
attach() { mkdir -p "\$release"; cp "\$@" "\$release/"; }
case "\$command" in
  view) [[ -d "\$release" ]] ;;
  create)
    git --git-dir="$remote_git" rev-parse --verify --quiet "refs/tags/\$tag" >/dev/null ||
      { echo "gh: tag \$tag does not exist on the remote (--verify-tag)" >&2; exit 1; }
    [[ ! -d "\$release" ]] || { echo "gh: release \$tag already exists" >&2; exit 1; }
    files=()
    while ((\$# > 0)); do
      case "\$1" in
        --verify-tag) shift ;;
        --title) echo "\$2" >"$scratch/title-\$tag"; shift 2 ;;
        --notes-file) notes=\$2; shift 2 ;;
        *) files+=("\$1"); shift ;;
      esac
    done
    attach "\${files[@]}"
    cp "\$notes" "$scratch/notes-\$tag.md"
    ;;
  upload)
    [[ -d "\$release" ]] || { echo "gh: no release \$tag" >&2; exit 1; }
    [[ "\${*: -1}" == --clobber ]] || { echo "gh: an asset that exists needs --clobber" >&2; exit 1; }
    attach "\${@:1:\$#-1}" ;;
  edit) [[ "\$1" == --notes-file ]] && cp "\$2" "$scratch/notes-\$tag.md" ;;
  *) echo "gh: unexpected release \$command" >&2; exit 1 ;;
esac
# The API's latest release: the newest tag with a release.
latest=\$(ls "$github/download" | sort -V | tail -n 1)
/usr/bin/python3 - "$github" "\$latest" "\$(cat "$scratch/server-url" 2>/dev/null || true)" <<'PY'
import json, os, sys
github, tag, url = sys.argv[1:]
assets = [{"name": name, "browser_download_url": f"{url}/download/{tag}/{name}"}
          for name in sorted(os.listdir(f"{github}/download/{tag}"))]
json.dump({"tag_name": tag, "assets": assets}, open(f"{github}/repos/owner/heapline/releases/latest", "w"))
PY
STUB
chmod +x "$scratch/bin/gh"

start_api() {
  /usr/bin/python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$github" >"$scratch/server.log" 2>&1 &
  server_pid=$!
  trap 'kill "$server_pid" 2>/dev/null || true; rm -rf "$scratch"' EXIT
  local i
  for ((i = 0; i < 100; i++)); do
    if port=$(sed -nE 's/^Serving HTTP on .* port ([0-9]+) .*/\1/p' "$scratch/server.log") && [[ -n "$port" ]]; then
      echo "http://127.0.0.1:$port" >"$scratch/server-url"
      return
    fi
    sleep 0.1
  done
  fail "the stand-in API did not start: $(cat "$scratch/server.log")"
}

# package TAG: the package job on a fresh checkout of TAG; sets status, log
# and assets (the directory it fills).
package() {
  rm -rf "$scratch/run"
  git clone --quiet "$remote_git" "$scratch/run" 2>/dev/null
  # (A tag that is not one is refused by the script itself.)
  git -C "$scratch/run" checkout --quiet "$1" 2>/dev/null || true
  assets=$scratch/run/build/release-assets
  status=0
  log=$(HEAPLINE_REPO_DIR=$scratch/run HEAPLINE_BUILD_DIR=$build_dir HEAPLINE_RELEASE_DIR=$assets \
    HEAPLINE_RELEASE_ONLY=churn-1t \
    "$tree/tools/ci/build_release.sh" "$1" 2>&1) || status=$?
  [[ -z "${DEBUG:-}" ]] || printf '%s\n' "$log" >&2
}

# publish TAG: the publish job, on what the package job made.
publish() {
  status=0
  log=$(GH_REPO=owner/heapline "$tree/tools/ci/publish_release.sh" "$1" "$assets" 2>&1) || status=$?
}

# check_assets TAG LABELS...: the package job's files for TAG, the comparison
# with these columns.
check_assets() {
  local tag=$1 release_version=${1#v}
  shift
  local deb
  deb=$(find "$assets" -maxdepth 1 -name "heapline_${release_version}_*.deb" -printf "%f")
  assert_eq "$(find "$assets" -mindepth 1 -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')" \
    "heapline-$release_version-comparison.json heapline-$release_version-comparison.md $deb notes.md " "the files of $tag"
  assert_eq "$(dpkg-deb -f "$assets/$deb" Package Version | tr '\n' ' ')" "Package: heapline Version: $release_version " \
    "the package's control fields"
  assert_eq "$deb" "heapline_${release_version}_$(dpkg-deb -f "$assets/$deb" Architecture).deb" "the package's name"
  local contents
  contents=$(dpkg-deb -c "$assets/$deb")
  [[ "$contents" == *" ./usr/bin/heapline"$'\n'* ]] || fail "no /usr/bin/heapline in $deb"
  local header="| Scenario | Figure |"
  for label in "$@"; do header+=" $label |"; done
  grep -qF -- "$header" "$assets/heapline-$release_version-comparison.md" ||
    fail "the table's columns are not $*: $(head -n 5 "$assets/heapline-$release_version-comparison.md")"
  /usr/bin/python3 - "$assets/heapline-$release_version-comparison.json" "$@" <<'PY' || fail "the comparison's raw data"
import json, sys
data = json.load(open(sys.argv[1]))
assert data["schema"] == "heapline-comparison/1", data["schema"]
assert [b["label"] for b in data["builds"]] == sys.argv[2:], data["builds"]
assert data["rounds"] == 3, data["rounds"]
PY
  # The user's method: three alternating rounds, the floor and the peers,
  # ten runs a side at the docs' scale (a quarter of the operation counts),
  # and the instructions counted (compare's default).
  local arguments
  arguments=$(cat "$scratch/compare-arguments")
  assert_contains "$arguments" "-- --floor --memusage --heaptrack --rounds 3 --runs 10 --scale 0.25 " \
    "compare_releases.sh's options"
  [[ "$arguments" != *--no-instructions* ]] || fail "the release comparison counts no instructions: $arguments"
  assert_contains "$(cat "$assets/notes.md")" "## heapline $release_version (" "the release's text"
  assert_contains "$(cat "$assets/notes.md")" "apt install ./$deb" "the release's text"
}

with_previous() {
  tag v0.4.0
  dev_git -C "$scratch/developer" commit --quiet --allow-empty -m "the release"
  tag "v$version"
  package "v$version"
  assert_eq "$status" 0 "the package job's status ($log)"
  assert_contains "$log" "comparing v$version with the previous release v0.4.0" "the package job's log"
  check_assets "v$version" v0.4.0 "v$version" "forwarding only" libmemusage.so heaptrack
  assert_contains "$(cat "$assets/notes.md")" "### Overhead against v0.4.0" "the release's text"

  start_api
  publish "v$version"
  assert_eq "$status" 0 "publish's status ($log)"
  local attached=$github/download/v$version name
  assert_eq "$(find "$attached" -type f | wc -l)" 3 "the number of files attached ($(find "$attached" -type f))"
  for name in "$attached"/*; do
    cmp -s "$name" "$assets/$(basename "$name")" || fail "$(basename "$name") attached is not the one built"
  done
  assert_eq "$(cat "$scratch/title-v$version")" "heapline $version" "the release's title"
  cmp -s "$scratch/notes-v$version.md" "$assets/notes.md" || fail "the release's text is not notes.md"
  # A re-run replaces the files and the text: still three files.
  publish "v$version"
  assert_eq "$status" 0 "publish's status again ($log)"
  assert_contains "$log" "exists: replacing its assets and text" "publish's log again"
  assert_eq "$(find "$attached" -type f | wc -l)" 3 "the number of files attached after a re-run"

  # The site: the docs' release table is the release's own.
  git clone --quiet "$remote_git" "$scratch/site" 2>/dev/null
  status=0
  log=$(GITHUB_REPOSITORY=owner/heapline GITHUB_API_URL=$(cat "$scratch/server-url") GITHUB_TOKEN=token \
    HEAPLINE_REPO_DIR=$scratch/site "$tree/tools/ci/fetch_release_comparison.py" 2>&1) || status=$?
  assert_eq "$status" 0 "the fetch's status ($log)"
  cmp -s "$scratch/site/docs/release-comparison.json" "$attached/heapline-$version-comparison.json" ||
    fail "the site's docs/release-comparison.json is not the release's ($log)"
  mkdir -p "$scratch/empty-store"
  "$bin_dir/heapline-bench" --source-dir "$scratch/site" render --store "$scratch/empty-store" --no-plots \
    >/dev/null 2>"$scratch/render.log" || fail "render: $(cat "$scratch/render.log")"
  grep -qF "| v0.4.0 | v$version | forwarding only |" "$scratch/site/docs/_generated/release-comparison.md" ||
    fail "the docs' release table is not the release's: $(head -n 5 "$scratch/site/docs/_generated/release-comparison.md")"
}

first_release() {
  tag "v$version"
  package "v$version"
  assert_eq "$status" 0 "the package job's status ($log)"
  assert_contains "$log" "v$version is the first release" "the package job's log"
  check_assets "v$version" "v$version" "forwarding only" libmemusage.so heaptrack
  assert_contains "$(cat "$assets/notes.md")" "### Overhead"$'\n' "the release's text"
  start_api
  publish "v$version"
  assert_eq "$status" 0 "publish's status ($log)"
  assert_eq "$(find "$github/download/v$version" -type f | wc -l)" 3 "the number of files attached"
}

refused() {
  local bad
  for bad in 0.5.0 v0.5 v0.5.0-rc1 "v$version;true"; do
    package "$bad"
    assert_eq "$status" 1 "the status for the tag '$bad'"
    assert_contains "$log" "is not a release tag (vX.Y.Z)" "the refusal of '$bad'"
  done
  tag v9.8.7
  package v9.8.7
  assert_eq "$status" 1 "the status for a tag that is not the version"
  assert_contains "$log" "the tag v9.8.7 is not the version CMakeLists.txt holds ($version)" "the refusal"
  # The version without its section in CHANGELOG.md.
  sed -i "s/^## \[$version\] - /## [0.0.1] - /" "$scratch/developer/CHANGELOG.md"
  dev_git -C "$scratch/developer" commit --quiet -am "no changelog for the release"
  tag "v$version"
  package "v$version"
  assert_eq "$status" 1 "the status without a changelog section"
  assert_contains "$log" "CHANGELOG.md has no dated section '## [$version] - YYYY-MM-DD'" "the refusal"
  [[ ! -e "$assets" ]] || fail "a refused tag made $(ls "$assets")"
  [[ ! -e "$scratch/compare-arguments" ]] || fail "a refused tag was measured"
  # publish without the package job's files attaches nothing.
  mkdir -p "$assets"
  publish "v$version"
  assert_eq "$status" 1 "publish's status without the files"
  assert_contains "$log" "expected one heapline_${version}_*.deb" "publish's refusal"
  [[ ! -e "$scratch/gh-calls" ]] || fail "publish called gh without the files: $(cat "$scratch/gh-calls")"
}

docs_fallback() {
  git clone --quiet "$remote_git" "$scratch/site" 2>/dev/null
  local tracked=$scratch/site/docs/release-comparison.json
  fetch() {
    status=0
    log=$(GITHUB_REPOSITORY=owner/heapline GITHUB_API_URL=$(cat "$scratch/server-url") \
      HEAPLINE_REPO_DIR=$scratch/site "$tree/tools/ci/fetch_release_comparison.py" 2>&1) || status=$?
  }
  start_api
  # No release: the API answers 404.
  fetch
  assert_eq "$status" 0 "the fetch's status before any release ($log)"
  assert_contains "$log" "owner/heapline has no release yet: the docs keep docs/release-comparison.json" "the fetch"
  git -C "$scratch/site" diff --quiet || fail "the fetch changed the tracked comparison without a release"
  # A release without its comparison (made by hand).
  tag "v$version"
  mkdir -p "$scratch/hand"
  echo "notes" >"$scratch/hand/notes.md"
  "$scratch/bin/gh" release create "v$version" "$scratch/hand/notes.md" --title "by hand" --notes-file "$scratch/hand/notes.md"
  fetch
  assert_eq "$status" 0 "the fetch's status for a release without its comparison ($log)"
  assert_contains "$log" "has no heapline-$version-comparison.json attached: the docs keep" "the fetch"
  git -C "$scratch/site" diff --quiet || fail "the fetch changed the tracked comparison"
  # An attached file that is not a comparison stops the site.
  echo '{"schema": "heapline-points/1"}' >"$scratch/hand/heapline-$version-comparison.json"
  "$scratch/bin/gh" release upload "v$version" "$scratch/hand/heapline-$version-comparison.json" --clobber
  fetch
  assert_eq "$status" 1 "the fetch's status for a file that is not a comparison"
  assert_contains "$log" "heapline-$version-comparison.json of v$version is not a release comparison" "the refusal"
  cmp -s "$tracked" "$source_dir/docs/release-comparison.json" || fail "a refused file replaced the tracked one"
}

"$case_name"
echo "release workflow ($case_name): ok"
