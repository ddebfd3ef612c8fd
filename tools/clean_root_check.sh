#!/usr/bin/env bash
# Installs heapline's Debian package in a clean Debian 12 root and uses it as
# a new user would, from /: a summary of python3, a profile of a C program,
# the man page, a program built with pkg-config and one with find_package,
# then removes the package and lists any file of it left behind. Prints the
# transcript; exits non-zero at the first step that fails.
#
#   tools/clean_root_check.sh PACKAGE.deb [ROOT]
#
# ROOT (default build/clean-root) is made with debootstrap when it does not
# hold a Debian root yet (a few minutes, from Debian's mirror). Needs root
# (chroot, mounts); /proc and /dev are mounted into ROOT for the run only.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR

if (($# < 1 || $# > 2)); then
  echo "usage: tools/clean_root_check.sh PACKAGE.deb [ROOT]" >&2
  exit 2
fi
package=$(realpath -- "$1")
root=${2:-build/clean-root}
[[ -f "$package" ]] || { echo "clean_root_check: no package at $1" >&2; exit 2; }
((EUID == 0)) || { echo "clean_root_check: needs root (debootstrap, chroot, mounts)" >&2; exit 2; }

if [[ ! -x "$root/usr/bin/apt-get" ]]; then
  command -v debootstrap >/dev/null || { echo "clean_root_check: debootstrap is not installed (apt-get install debootstrap)" >&2; exit 2; }
  echo "clean_root_check: making a Debian 12 root in $root with debootstrap"
  debootstrap --variant=minbase bookworm "$root" http://deb.debian.org/debian >/dev/null
fi
root=$(realpath -- "$root")

mounted=()
cleanup() {
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do umount -l "${mounted[$i]}" 2>/dev/null || true; done
}
trap cleanup EXIT
for fs in proc dev; do
  mountpoint -q "$root/$fs" || { mount --bind "/$fs" "$root/$fs"; mounted+=("$root/$fs"); }
done

cp /etc/resolv.conf "$root/etc/resolv.conf"

# The steps run inside the root, from /, as tools/clean_root_session.sh.
cp "$package" "$root/tmp/"
cp "$(dirname "${BASH_SOURCE[0]}")/clean_root_session.sh" "$root/tmp/session.sh"
chroot "$root" /bin/bash /tmp/session.sh "/tmp/$(basename -- "$package")"
