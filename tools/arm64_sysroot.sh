#!/usr/bin/env bash
# Makes the arm64 (aarch64) sysroot that the cross build links against and
# that qemu-user runs its programs in: Debian's arm64 packages, fetched by
# name with `apt-get download` and unpacked with `dpkg-deb -x` into a folder
# of the build tree. Nothing is installed: the machine's own packages, its
# native build and CI are never touched (an arm64 -dev package installed
# system-wide can replace the native one it cannot stand beside).
#
#   tools/arm64_sysroot.sh [DIR]     default build/arm64-sysroot
#
# Needs the arm64 architecture in apt's lists (tools/setup.sh --arm64 adds
# it). Made again only when the package list below changes.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
sysroot=${1:-$source_dir/build/arm64-sysroot}

# What the build finds with find_package/pkg-config, and what its programs
# and tests load at run time (the C and C++ runtimes for qemu's -L, the
# libraries the sampler and the allocator tests preload). The compiler's own
# C library and crt files come with crossbuild-essential-arm64.
arm64_packages=(
  libc6 libgcc-s1 libstdc++6 gcc-12-base
  libsimdjson-dev libsimdjson14
  libbenchmark-dev libbenchmark1debian
  libgtest-dev libgmock-dev
  libdw-dev libdw1 libelf-dev libelf1 zlib1g-dev zlib1g liblzma-dev liblzma5 libbz2-1.0
  libunwind8
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0
)
# Architecture-independent headers, taken into the sysroot as well so that
# the cross build finds nothing of the host's.
all_packages=(libcli11-dev nlohmann-json3-dev)

wanted="${arm64_packages[*]/%/:arm64} ${all_packages[*]}"
stamp=$sysroot/.heapline-packages
if [[ -f "$stamp" && "$(cat "$stamp")" == "$wanted" ]]; then
  echo "arm64_sysroot: $sysroot is up to date"
  exit 0
fi

if ! dpkg --print-foreign-architectures | grep -qx arm64; then
  echo "arm64_sysroot: apt knows no arm64 packages; run tools/setup.sh --arm64 (dpkg --add-architecture arm64, apt-get update)" >&2
  exit 1
fi

rm -rf "$sysroot"
mkdir -p "$sysroot/.debs"
# shellcheck disable=SC2086 # the list is words by design
if ! (cd "$sysroot/.debs" && apt-get download -q $wanted) >"$sysroot/.download.log" 2>&1; then
  cat "$sysroot/.download.log" >&2
  exit 1
fi
for package in "${arm64_packages[@]}" "${all_packages[@]}"; do
  compgen -G "$sysroot/.debs/${package}_*.deb" >/dev/null || {
    echo "arm64_sysroot: apt-get download fetched no $package" >&2
    exit 1
  }
done
for deb in "$sysroot"/.debs/*.deb; do dpkg-deb -x "$deb" "$sysroot"; done
rm -rf "$sysroot/.debs" "$sysroot/.download.log"

# Absolute symbolic links (libfoo.so -> /usr/lib/aarch64-linux-gnu/libfoo.so.1)
# would point at the host's files: made relative, they stay in the sysroot.
while IFS= read -r -d '' link; do
  target=$(readlink "$link")
  [[ "$target" == /* ]] || continue
  ln -sfn "$(realpath -m --relative-to="$(dirname "$link")" "$sysroot$target")" "$link"
done < <(find "$sysroot" -type l -print0)

# Debian 12's packages still put the C library under /lib; the loader
# (PT_INTERP /lib/ld-linux-aarch64.so.1) is found there by qemu's -L.
[[ -e "$sysroot/lib/ld-linux-aarch64.so.1" ]] || {
  echo "arm64_sysroot: no loader at $sysroot/lib/ld-linux-aarch64.so.1" >&2
  exit 1
}
# The loader would otherwise read the host's /etc/ld.so.cache through qemu
# (a path missing under -L is looked up on the host): an empty one, which
# it ignores, keeps the search to its own directories in the sysroot.
mkdir -p "$sysroot/etc"
: >"$sysroot/etc/ld.so.cache"

echo "$wanted" >"$stamp"
echo "arm64_sysroot: $sysroot holds ${#arm64_packages[@]} arm64 and ${#all_packages[@]} architecture-independent packages"
