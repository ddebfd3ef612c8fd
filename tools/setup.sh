#!/usr/bin/env bash
# Installs the Debian packages heapline needs, by name, and only those that
# are missing. Works as root on a fresh Debian 12 machine (or through sudo).
#
#   tools/setup.sh          what building and running the suite needs
#   tools/setup.sh --test   also what the tests and the docs build need
#   tools/setup.sh --fuzz   also clang and libFuzzer, for tools/fuzz.sh
#   tools/setup.sh --arm64  also what tools/test.sh --arch arm64 needs on
#                           another processor: the cross compilers and
#                           qemu-user (native packages), and apt's lists of
#                           the arm64 packages, which tools/arm64_sysroot.sh
#                           unpacks into the build tree, and debootstrap
#                           (tools/arm64_root.sh). No arm64 package is
#                           ever installed on the machine: one that cannot
#                           stand beside the native one replaces it.
#   tools/setup.sh --test --arm64 ...   the options together
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR

build_packages=(
  g++ cmake make git
  libcli11-dev nlohmann-json3-dev libsimdjson-dev libbenchmark-dev libgtest-dev libgmock-dev
  python3 gnuplot-nox valgrind
  # the heap sampler: libunwind8 is loaded by the library at run time (it
  # still needs libc alone); the launcher names frames with libdw and
  # gzips pprof profiles with zlib
  libunwind8 libdw-dev zlib1g-dev pkg-config
  # the suite's allocator entries (scenarios/allocators.json) and the release
  # comparison's peer beside glibc's memusage
  libjemalloc2 libtcmalloc-minimal4 libmimalloc2.0 heaptrack
  # the man pages, made from the programs' --help at build time; the Debian
  # package (cpack -G DEB: dpkg-shlibdeps and file compute its dependencies)
  help2man dpkg-dev file
)
# tools/fuzz.sh: libFuzzer and clang's sanitizer runtimes
fuzz_packages=(
  clang libfuzzer-14-dev libclang-rt-14-dev
)
# tools/test.sh --arch arm64 on another processor: qemu-user's static
# build, so that a test's LD_PRELOAD reaches the arm64 program and not qemu,
# and debootstrap, which makes the arm64 root the tests run in
# (tools/arm64_root.sh)
arm64_packages=(
  crossbuild-essential-arm64 qemu-user-static debootstrap
)
test_packages=(
  python3-sphinx python3-myst-parser
  shellcheck
  python3-yaml nodejs
  # go tool pprof reads the exported heap profiles (tests/launcher)
  golang-go
  # Debian's checks of the package (tests/install)
  lintian
)

wanted=("${build_packages[@]}")
arm64=0
for option in "$@"; do
  case "$option" in
    --test) wanted+=("${test_packages[@]}") ;;
    --fuzz) wanted+=("${fuzz_packages[@]}") ;;
    --arm64) arm64=1 ;;
    *) echo "usage: tools/setup.sh [--test] [--fuzz] [--arm64]" >&2; exit 2 ;;
  esac
done

# A package counts as installed only in this machine's architecture (or as
# an architecture-independent one): with a foreign architecture added
# (dpkg --add-architecture arm64), libsimdjson-dev:arm64 can stand where
# libsimdjson-dev:amd64 was, and a bare name would find it installed while
# the native build finds no simdjson. apt-get installs a bare name for the
# native architecture, replacing a foreign one that cannot be beside it.
native=$(dpkg --print-architecture)
# On an arm64 machine the arm64 build is the native one.
add_arm64=0
if ((arm64)) && [[ "$native" != arm64 ]]; then
  wanted+=("${arm64_packages[@]}")
  dpkg --print-foreign-architectures | grep -qx arm64 || add_arm64=1
fi
installed_natively() {
  dpkg-query -W -f='${Status} ${Architecture}\n' "$1" 2>/dev/null |
    grep -qE "^install ok installed ($native|all)\$"
}
missing=()
for package in "${wanted[@]}"; do
  installed_natively "$package" || missing+=("$package")
done

if ((${#missing[@]} == 0 && !add_arm64)); then
  echo "setup: all ${#wanted[@]} Debian packages heapline needs are installed"
  exit 0
fi

sudo=()
if ((EUID != 0)); then
  if command -v sudo >/dev/null; then
    sudo=(sudo)
  else
    echo "setup: these Debian packages are missing and installing them needs root: ${missing[*]}" >&2
    exit 1
  fi
fi

if ((add_arm64)); then
  echo "setup: adding the arm64 architecture to apt's lists (for tools/arm64_sysroot.sh; nothing arm64 is installed)"
  "${sudo[@]}" dpkg --add-architecture arm64
fi
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
if ((${#missing[@]} > 0)); then
  echo "setup: installing ${#missing[@]} Debian package(s): ${missing[*]}"
  "${sudo[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
echo "setup: done"
