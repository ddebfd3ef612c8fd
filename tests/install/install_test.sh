#!/usr/bin/env bash
# install_test.sh CASE BUILD_DIR PREFIX
#
# heapline as installed by `cmake --install`, used the way a user would from a
# directory of their own, far from the build and the source tree:
#   install     cmake --install BUILD_DIR --prefix PREFIX (the fixture of the
#               others), and nothing written outside PREFIX
#   launcher    heapline --version names the installed libheapline.so, a run
#               writes a report and prints its summary; the same through a
#               symbolic link and from a copy of the prefix elsewhere
#   bench       heapline-bench finds its catalogue, malloc_churn and the
#               preload libraries: a one-scenario suite at a tiny scale,
#               stored and rendered; the python scenario's script; compare
#               with the forwarding-only floor
#   marker_api  a program calling heapline_mark built with the installed
#               header through heapline.pc, and through find_package(heapline)
#               in a CMake project of its own; its marker in the report
#   man_pages   heapline(1) and heapline-bench(1) name every option the
#               programs' --help-all does, and no path of the build
#   docs        the docs, the changelog and the copyright file
#   debian_changelog  packaging/debian_changelog.cmake, the step cpack runs,
#               on changelogs of its own: a version's dated section becomes
#               Debian's changelog, a version without one is refused
#   debian_package  cpack -G DEB: heapline_VERSION_ARCH.deb holds the same
#               files as the install, under /usr, its binaries stripped, its
#               dependencies computed and its optional ones recommended, a
#               Debian changelog; and lintian finds no error and no warning
set -euo pipefail
case_name=$1 build_dir=$(cd "$2" && pwd) prefix=$3

fail() {
  printf 'FAIL (%s): %s\n' "$case_name" "$*" >&2
  exit 1
}
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
version=$(sed -nE '/^project\(heapline/,/\)/s/^[[:space:]]*VERSION[[:space:]]+([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' \
  "$source_dir/CMakeLists.txt")
[[ -n "$version" ]] || fail "no VERSION in the project() of $source_dir/CMakeLists.txt"

if [[ "$case_name" == install ]]; then
  rm -rf "$prefix"
  mkdir -p "$prefix"
  cmake --install "$build_dir" --prefix "$prefix" >"$prefix.log" 2>&1 || { cat "$prefix.log"; fail "cmake --install"; }
  outside=$(grep -v "^$prefix/" "$build_dir/install_manifest.txt" || true)
  [[ -z "$outside" ]] || fail "installed outside $prefix: $outside"
  echo "install: $(wc -l <"$build_dir/install_manifest.txt") file(s) in $prefix"
  exit 0
fi

# debian_changelog: the script cpack runs before it packs (its
# CPACK_PRE_BUILD_SCRIPTS), given what cpack gives it, on CHANGELOG.md texts
# of the test's own.
if [[ "$case_name" == debian_changelog ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/heapline-changelog.XXXXXX")
  trap 'rm -rf "$work"' EXIT
  cat >"$work/CHANGELOG.md" <<'CHANGES'
# Changelog

## [Unreleased]

- Not released yet: a `]]>` in a name, a lone [ bracket; a semicolon.

## [2.1.0]

- Undated.

## [2.0.0] - 2031-02-03

### Added

- The first item, on
  two lines.
- The second item; its `]]>` and [brackets] kept.

## [1.9.0] - 2030-12-31

## [1.0.0] - 2030-01-01

- An older item.
CHANGES
  # changelog VERSION: runs the script for VERSION; sets status and said.
  changelog() {
    rm -rf "$work/staging"
    mkdir -p "$work/staging/usr/share/doc/heapline"
    status=0
    said=$(cmake -DCPACK_PACKAGE_VERSION="$1" -DCPACK_HEAPLINE_CHANGELOG="$work/CHANGELOG.md" \
      -DCPACK_PACKAGE_NAME=heapline -DCPACK_PACKAGE_CONTACT="A Maintainer <maintainer@example.org>" \
      -DCPACK_TEMPORARY_DIRECTORY="$work/staging" -DCPACK_PACKAGING_INSTALL_PREFIX=/usr \
      -DCPACK_HEAPLINE_DOCDIR=share/doc/heapline -P "$source_dir/packaging/debian_changelog.cmake" 2>&1) || status=$?
  }
  made=$work/staging/usr/share/doc/heapline/changelog.gz
  changelog 2.0.0
  ((status == 0)) || fail "2.0.0's section refused: $said"
  expected=$(printf '%s\n' "heapline (2.0.0) unstable; urgency=medium" "" "  * The first item, on" "    two lines." \
    "  * The second item; its \`]]>\` and [brackets] kept." "" " -- A Maintainer <maintainer@example.org>  Mon, 03 Feb 2031 00:00:00 +0000")
  [[ "$(zcat "$made")" == "$expected" ]] || fail "2.0.0's Debian changelog: $(zcat "$made")"
  # Refused: no section, an undated one, a dated one without items.
  for version in 3.0.0 2.1.0 1.9.0 Unreleased; do
    changelog "$version"
    ((status != 0)) || fail "$version's changelog was made: $(zcat "$made" 2>&1)"
    said=$(tr -s '[:space:]' ' ' <<<"$said")  # CMake wraps its messages
    [[ "$said" == *"has no dated section \`## [$version] - YYYY-MM-DD\` with items"* ]] ||
      fail "$version refused without saying why: $said"
    [[ ! -e "$made" ]] || fail "$version refused, yet a changelog was left: $made"
  done
  echo "debian_changelog: a dated section made, the others refused"
  exit 0
fi
[[ -x "$prefix/bin/heapline" ]] || fail "no heapline in $prefix/bin (the install fixture did not run?)"

# An unrelated directory: neither the build nor the source tree, and no
# setting of the build's that could point back at it.
elsewhere=$(mktemp -d "${TMPDIR:-/tmp}/heapline-installed.XXXXXX")
trap 'rm -rf "$elsewhere"' EXIT
cd "$elsewhere"
unset HEAPLINE_LIB HEAPLINE_OUT HEAPLINE_SUMMARY HEAPLINE_SAMPLE HEAPLINE_BUILD_DIR
# The installed libraries: exactly one libheapline.so, in heapline's own
# library directory.
mapfile -t libraries < <(find "$prefix" -name libheapline.so)
((${#libraries[@]} == 1)) || fail "expected one libheapline.so under $prefix, found: ${libraries[*]:-none}"
library=${libraries[0]}
library_dir=$(dirname "$library")
[[ "$library_dir" == "$prefix"/lib*/heapline ]] || fail "libheapline.so is in $library_dir, not <libdir>/heapline"

# py_check EXPRESSION FILE: a Python expression about the JSON in FILE (as j).
py_check() {
  /usr/bin/python3 -c 'import json, sys; j = json.load(open(sys.argv[2])); sys.exit(0 if eval(sys.argv[1]) else 1)' \
    "$1" "$2" || fail "$2: not true: $1"
}

launcher() {
  local said
  # On Debian <libdir> is the multiarch directory of the build's compiler,
  # whatever the prefix (this one is not /usr).
  if [[ -f /etc/debian_version ]]; then
    local compiler multiarch
    compiler=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$build_dir/CMakeCache.txt")
    # A cross build's compiler is its toolchain file's, not in the cache:
    # CMake's record of it then. Debian names a cross compiler after its
    # multiarch (aarch64-linux-gnu-gcc), which tells it where the compiler
    # is not on this machine (tools/test.sh --arch arm64 runs the tests in
    # an arm64 root, without the x86-64 cross compilers).
    if [[ -z "$compiler" ]]; then
      compiler=$(sed -n 's/^set(CMAKE_C_COMPILER "\(.*\)")$/\1/p' "$build_dir"/CMakeFiles/[0-9]*/CMakeCCompiler.cmake | head -n 1)
    fi
    if command -v "$compiler" >/dev/null; then
      multiarch=$("$compiler" -print-multiarch)
    else
      multiarch=$(basename "$compiler")
      multiarch=${multiarch%-gcc}
    fi
    [[ -n "$multiarch" && "$library_dir" == "$prefix/lib/$multiarch/heapline" ]] ||
      fail "libheapline.so is in $library_dir, not in Debian's multiarch $prefix/lib/${multiarch:-?}/heapline"
  fi
  said=$("$prefix/bin/heapline" --version)
  [[ "$said" == "heapline $version"$'\n'"preloads $library" ]] || fail "heapline --version said: $said"

  "$prefix/bin/heapline" --summary --out report.json -- /usr/bin/python3 -c 'b = bytearray(8 << 20); del b' \
    2>summary.txt || { cat summary.txt; fail "a run under the installed heapline"; }
  py_check 'j["peak_bytes"] >= 8 << 20' report.json
  grep -q "^heapline: peak " summary.txt || { cat summary.txt; fail "no summary line"; }

  # A link to heapline (a user's ~/bin) finds the files of its target.
  ln -s "$prefix/bin/heapline" linked-heapline
  said=$(./linked-heapline --version)
  [[ "$said" == *"preloads $library" ]] || fail "heapline through a link said: $said"
  # Whatever the prefix: a copy of the install elsewhere preloads its own.
  cp -a "$prefix" moved
  said=$(moved/bin/heapline --version)
  [[ "$said" == *"preloads $elsewhere/moved/${library#"$prefix"/}" ]] || fail "a moved install said: $said"
  moved/bin/heapline -q --out moved.json -- /bin/true || fail "a run under the moved install"
  [[ -f moved.json ]] || fail "the moved install wrote no report"
  echo "launcher: installed heapline preloads $library"
}

bench() {
  local bench=$prefix/bin/heapline-bench said
  said=$("$bench" --version)
  [[ "$said" == "heapline-bench $version" ]] || fail "heapline-bench --version said: $said"
  # The store and the page go into the current directory; the commit is
  # named (an install holds no checkout).
  "$bench" suite --only churn-1t --scale 0.0005 --runs 1 --no-instructions --no-plots \
    --commit 0123456789abcdef0123456789abcdef01234567 >suite.txt 2>&1 || { cat suite.txt; fail "suite"; }
  [[ -f bench-data/points.jsonl ]] || fail "the suite stored no point in ./bench-data"
  head -n 1 bench-data/points.jsonl >point.json
  /usr/bin/python3 - "$library" <<'PY' || fail "the point is not the installed build's: $(cat point.json)"
import json, sys
point = json.load(open("point.json"))
library = sys.argv[1]
assert point["scenario"] == "churn-1t", point["scenario"]
assert point["library"] == library, point["library"]
# The accuracy figure comes from libheapline_accuracy.so beside the library.
assert point["library_report"]["accuracy"] is not None, "no accuracy figure"
PY
  grep -q 'churn-1t' docs/_generated/performance.md || fail "the page in ./docs/_generated does not show churn-1t"

  # The python scenario's script: {source} is <datadir>/heapline (a point
  # names the script without its directory; without the installed one the
  # run fails).
  "$bench" overhead python none 1 --scale 0.002 --json >python.json 2>python.err || { cat python.err; fail "overhead python"; }
  py_check 'j["scenario"] == "python" and j["command"] == "python3 bench/python_churn.py 1"' python.json

  # compare --floor: the installed forwarding-only library; the table in the
  # current directory.
  "$bench" compare --build "installed=$library" --floor --only churn-1t --scale 0.0005 --runs 1 --rounds 1 \
    --no-instructions >compare.txt 2>&1 || { cat compare.txt; fail "compare --floor"; }
  grep -q '| installed | forwarding only |' release-comparison/release-comparison.md ||
    fail "no comparison table in ./release-comparison: $(cat compare.txt)"
  echo "bench: the suite, the python scenario and compare ran with the installed files"
}

marker_api() {
  cat >marker.c <<'C'
#include <heapline.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
  heapline_mark("loaded");
  char* block = malloc(1 << 20);
  block[0] = 1;
  printf("%lld\n", (long long)heapline_peak_bytes());
  free(block);
  return 0;
}
C
  local flags
  flags=$(PKG_CONFIG_PATH=$prefix/share/pkgconfig pkg-config --cflags --libs heapline) ||
    fail "pkg-config does not find heapline.pc in $prefix/share/pkgconfig"
  [[ "$(PKG_CONFIG_PATH=$prefix/share/pkgconfig pkg-config --modversion heapline)" == "$version" ]] ||
    fail "heapline.pc's version is not $version"
  # shellcheck disable=SC2086 # the flags are words
  cc -Wall -Werror marker.c $flags -o marker-pc || fail "the marker program does not build with heapline.pc ($flags)"

  # find_package(heapline) in a project of its own.
  mkdir project
  cp marker.c project/
  cat >project/CMakeLists.txt <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(marker C)
find_package(heapline 0.5 REQUIRED)
add_executable(marker marker.c)
target_link_libraries(marker PRIVATE heapline::api)
CMAKE
  if ! cmake -S project -B project/build -DCMAKE_PREFIX_PATH="$prefix" >cmake.log 2>&1 ||
    ! cmake --build project/build >>cmake.log 2>&1; then
    cat cmake.log
    fail "find_package(heapline) project"
  fi

  local program peak
  for program in ./marker-pc project/build/marker; do
    # Without the library the calls do nothing.
    [[ "$("$program")" == 0 ]] || fail "$program without heapline printed a peak"
    peak=$("$prefix/bin/heapline" -q --out marker.json -- "$program") || fail "$program under heapline"
    ((peak >= 1 << 20)) || fail "$program under heapline: peak $peak"
    py_check 'any(name == "loaded" for _, name in j["markers"])' marker.json
    rm marker.json
  done
  echo "marker_api: heapline.pc and find_package(heapline) build a program whose marker reaches the report"
}

man_pages() {
  local program page options option
  for program in heapline heapline-bench; do
    [[ -x "$prefix/bin/$program" ]] || continue
    page=$prefix/share/man/man1/$program.1.gz
    [[ -f "$page" ]] || fail "no $page"
    # help2man writes '-' as '\-'.
    zcat "$page" | sed 's/\\-/-/g' >"$program.1"
    grep -q "^\.TH ${program^^} \"1\"" "$program.1" || fail "$page has no .TH line"
    grep -q "^$program - [a-z]" "$program.1" || fail "$page has no NAME line"
    options=$("$prefix/bin/$program" --help-all | grep -oE -- '--[a-z][a-z-]+' | sort -u)
    [[ -n "$options" ]] || fail "$program --help-all names no option"
    for option in $options; do
      grep -qF -- "$option" "$program.1" || fail "$page does not name $option"
    done
    ! grep -nF -e "$build_dir" -e "$source_dir" "$program.1" || fail "$page names a path of the build"
  done
  echo "man_pages: every option of --help-all in the man pages"
}

docs() {
  local docdir=$prefix/share/doc/heapline file
  for file in README.md CHANGELOG.md copyright interposer/README.md docs/usage.md docs/design.md; do
    [[ -f "$docdir/$file" ]] || fail "no $docdir/$file"
  done
  grep -q "^## \[$version\] - " "$docdir/CHANGELOG.md" || fail "the installed CHANGELOG.md has no section for $version"
  echo "docs: in $docdir"
}

debian_package() {
  local out=$elsewhere/package arch deb field
  arch=$(dpkg --print-architecture)
  (cd "$build_dir" && cpack -G DEB -B "$out" >"$elsewhere/cpack.log" 2>&1) || { cat "$elsewhere/cpack.log"; fail "cpack"; }
  deb=$out/heapline_${version}_$arch.deb
  [[ -f "$deb" ]] || fail "cpack made no $(basename "$deb"): $(ls "$out")"

  [[ "$(dpkg-deb -f "$deb" Package)" == heapline && "$(dpkg-deb -f "$deb" Version)" == "$version" ]] ||
    fail "the package is not heapline $version: $(dpkg-deb -f "$deb")"
  # What the binaries link (dpkg-shlibdeps), and what is only loaded or run
  # when there.
  local fields
  fields=$(dpkg-deb -f "$deb" Depends Recommends Suggests)
  for field in "Depends: libc6 (" "libdw1 (" "Recommends: libunwind8, gnuplot-nox | gnuplot" \
    "Suggests: valgrind, python3, heaptrack, git"; do
    [[ "$fields" == *"$field"* ]] || fail "no '$field' in: $(dpkg-deb -f "$deb")"
  done

  # The package holds what cmake --install installs, under /usr, and the
  # Debian changelog.
  dpkg-deb -c "$deb" | awk '$1 !~ /^d/ { print $6 }' | sort >package.files
  (cd "$prefix" && find . \( -type f -o -type l \) -printf './usr/%P\n'; echo ./usr/share/doc/heapline/changelog.gz) |
    sort >install.files
  diff install.files package.files >files.diff || fail "the package's files are not the install's: $(cat files.diff)"

  dpkg-deb -x "$deb" unpacked
  local elf_files=0 file kind
  while IFS= read -r -d '' file; do
    if [[ "$(head -c 4 "$file" | od -An -c | tr -d ' ')" == 177ELF ]]; then
      elf_files=$((elf_files + 1))
      kind=$(file -b "$file")
      [[ "$kind" == *", stripped"* ]] || fail "$file is not stripped: $kind"
    fi
  done < <(find unpacked -type f -print0)
  ((elf_files >= 3)) || fail "only $elf_files ELF file(s) in the package"
  # Debian's hardening on the programs: RELRO, bound at start (-z now) and
  # the checked buffer functions (_FORTIFY_SOURCE); none of these in the
  # preload library, whose every call is measured.
  # (Each readelf's output is read whole: grep -q would close the pipe early.)
  local program segments dynamic symbols
  for program in unpacked/usr/bin/heapline unpacked/usr/bin/heapline-bench; do
    segments=$(readelf -lW "$program")
    [[ "$segments" == *GNU_RELRO* ]] || fail "$program has no RELRO segment"
    dynamic=$(readelf -dW "$program")
    [[ "$dynamic" == *BIND_NOW* ]] || fail "$program is not bound at start (-z now): $dynamic"
    symbols=$(readelf --dyn-syms -W "$program")
    [[ "$symbols" =~ __[a-z_]+_chk@ ]] || fail "$program calls no checked buffer function"
  done
  local library
  library=$(find unpacked -name libheapline.so -type f | head -n 1)
  [[ -n "$library" ]] || fail "no libheapline.so in the package"
  symbols=$(readelf --dyn-syms -W "$library")
  [[ ! "$symbols" =~ __[a-z_]+_chk@ ]] || fail "$library calls checked buffer functions"
  [[ "$(zcat unpacked/usr/share/doc/heapline/changelog.gz | head -n 1)" == "heapline ($version) unstable; urgency=medium" ]] ||
    fail "the Debian changelog does not start with heapline ($version)"

  # Debian's own checks: no error and no warning (information and pedantic
  # notes are shown, not failed on).
  lintian --fail-on error,warning --display-info "$deb" >lintian.txt 2>&1 || { cat lintian.txt; fail "lintian"; }
  cat lintian.txt
  echo "debian_package: $(basename "$deb"), $(wc -l <package.files) files, lintian clean"
}

"$case_name"
