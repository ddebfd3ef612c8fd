#!/usr/bin/env bash
# An arm64 Debian 12 root in which tools/test.sh --arch arm64 runs the suite
# under qemu-user on another processor.
#
#   tools/arm64_root.sh make [ROOT]        makes ROOT (default build/arm64-root),
#                                          or brings it up to date
#   tools/arm64_root.sh run ROOT DIR... -- COMMAND...
#                                          runs COMMAND in ROOT, as root, with
#                                          each DIR (the source and build
#                                          trees) at its own path there (through
#                                          the verb `mounted`, its second step)
#
# Why a whole root: the tests run programs of the machine they run on
# (/bin/sh, python3, gcc, git, sort, gnuplot, valgrind) under the library,
# as a user would. With the arm64 programs alone emulated, those are the
# host's x86-64 ones: the arm64 libheapline.so cannot be preloaded into
# them, and the loader says so on their stderr. In the root every program
# is arm64 (the kernel hands each to qemu through binfmt_misc), so every
# test sees the processor it was built for.
#
# The root is debootstrap's minimal Debian 12 from the mirror apt uses here,
# with what tools/setup.sh --test installs on a test machine, installed by
# setup.sh itself inside the root (the same list, so the two never drift),
# and qemu-aarch64-static, the emulator ctest starts the gtest programs with
# (cmake/aarch64-linux-gnu.cmake). A stamp holds setup.sh's hash: a changed
# list brings the root up to date. It takes about 15 minutes the first time.
#
# `run` mounts in a mount namespace of its own (unshare): /proc, /dev, /tmp
# and the DIRs are seen in the root while COMMAND runs, and nothing stays
# mounted after it, even when it is killed.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

usage() {
  echo "usage: tools/arm64_root.sh make [ROOT] | run ROOT DIR... -- COMMAND..." >&2
  exit 2
}

# The Debian mirror apt uses on this machine (the root's packages come from
# the same place, the only one a CI machine may reach).
debian_mirror() {
  local uri=""
  if [[ -r /etc/apt/sources.list.d/debian.sources ]]; then
    uri=$(awk '/^URIs:/ { print $2; exit }' /etc/apt/sources.list.d/debian.sources)
  fi
  if [[ -z "$uri" && -r /etc/apt/sources.list ]]; then
    uri=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list)
  fi
  printf '%s' "${uri:-http://deb.debian.org/debian}"
}

# run ROOT DIR... -- COMMAND...
run_in_root() {
  local root=$1
  shift
  local dirs=()
  while (($# > 0)) && [[ "$1" != -- ]]; do
    dirs+=("$(cd "$1" && pwd)")
    shift
  done
  (($# > 1)) || usage
  shift
  [[ -x "$root/bin/sh" ]] || { echo "arm64_root: no root at $root: make it with tools/arm64_root.sh make" >&2; exit 1; }
  # The mounts are made by this script again, inside the new namespace
  # (the verb `mounted`): the directories and the command are arguments,
  # never text a shell reads.
  exec unshare --mount --propagation private -- "$0" mounted "$root" "${#dirs[@]}" "${dirs[@]}" "$@"
}

# mounted ROOT COUNT DIR... COMMAND...: inside run's mount namespace.
mount_and_run() {
  local root=$1 count=$2 i
  shift 2
  mount -t proc proc "$root/proc"
  mount --rbind /dev "$root/dev"
  mount --bind /tmp "$root/tmp"
  for ((i = 0; i < count; ++i)); do
    mkdir -p "$root$1"
    mount --bind "$1" "$root$1"
    shift
  done
  cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
  exec chroot "$root" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" "$@"
}

make_root() {
  local root=$1
  local wanted
  wanted=$(sha256sum "$source_dir/tools/setup.sh" | cut -d' ' -f1)
  if [[ -f "$root/.heapline-setup" && "$(cat "$root/.heapline-setup")" == "$wanted" ]]; then
    echo "arm64_root: $root is up to date"
    return 0
  fi
  command -v debootstrap >/dev/null || { echo "arm64_root: no debootstrap: run tools/setup.sh --arm64" >&2; exit 1; }
  if [[ ! -x "$root/bin/sh" ]]; then
    local mirror
    mirror=$(debian_mirror)
    echo "arm64_root: making a Debian 12 arm64 root at $root from $mirror"
    mkdir -p "$root"
    if ! debootstrap --arch=arm64 --variant=minbase bookworm "$root" "$mirror" >"$root.debootstrap.log" 2>&1; then
      tail -n 20 "$root.debootstrap.log" >&2
      echo "arm64_root: debootstrap failed (all of it: $root.debootstrap.log)" >&2
      exit 1
    fi
    rm -f "$root.debootstrap.log"
  fi
  cp /usr/bin/qemu-aarch64-static "$root/usr/bin/"
  "$0" run "$root" "$source_dir" -- "$source_dir/tools/setup.sh" --test
  echo "$wanted" >"$root/.heapline-setup"
  echo "arm64_root: $root holds what tools/setup.sh --test installs"
}

case "${1:-}" in
  make)
    (($# <= 2)) || usage
    make_root "${2:-$source_dir/build/arm64-root}"
    ;;
  run)
    (($# >= 4)) || usage
    shift
    run_in_root "$@"
    ;;
  mounted)  # run's own second step, in its namespace
    shift
    mount_and_run "$@"
    ;;
  *) usage ;;
esac
