#!/usr/bin/env bash
# The test command of the README and of CI: set up, build, run every test.
#
#   tools/test.sh [CTEST_ARGS...]             Release build in build/release
#   tools/test.sh --sanitize [CTEST_ARGS...]  ASan + UBSan build in build/sanitize
#   tools/test.sh --arch arm64 [CTEST_ARGS...] the arm64 (aarch64) build
#
# --sanitize builds everything with the sanitizers of cmake/sanitize.cmake
# (ASan and UBSan in the programs and tests, UBSan in trap mode in the
# preload libraries and the programs run under them) and runs every test
# but those that tools/sanitize.skip lists, with the reason each cannot run
# there. Any report of a sanitizer fails its test.
#
# --arch arm64 on an arm64 machine is the plain build and every test. On
# another one (x86-64) it cross-builds in build/arm64 with Debian's cross
# compilers (cmake/aarch64-linux-gnu.cmake) against the arm64 sysroot of
# tools/arm64_sysroot.sh (build/arm64-sysroot: Debian's arm64 packages
# unpacked, nothing installed), and runs the tests under qemu-user inside
# the arm64 Debian root of tools/arm64_root.sh (build/arm64-root), where
# every program is arm64: ctest starts the gtest programs through
# qemu-aarch64-static -L <sysroot>, and every other program (the launcher's
# command, the tests' probes, /bin/sh, python3, gcc) runs through the
# kernel's binfmt_misc entry for qemu-aarch64. (With the host's x86-64
# programs around them, the arm64 library could not be preloaded into a
# shell or a Python a test starts.) Not the README's test command: CI runs
# the arm64 suite natively, on an arm64 runner. The tests tools/arm64.skip
# lists, which cannot run under qemu-user, are left out, with the reason
# each.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

sanitize=0
if [[ "${1:-}" == --sanitize ]]; then
  sanitize=1
  shift
fi
arch=native
if [[ "${1:-}" == --arch ]]; then
  [[ "${2:-}" == arm64 ]] || { echo "usage: tools/test.sh --arch arm64 [CTEST_ARGS...]" >&2; exit 2; }
  shift 2
  [[ "$(uname -m)" == aarch64 ]] || arch=arm64
fi

"$source_dir/tools/setup.sh" --test
if [[ "$arch" == arm64 ]]; then
  "$source_dir/tools/setup.sh" --arm64
  sysroot=${HEAPLINE_ARM64_SYSROOT:-$source_dir/build/arm64-sysroot}
  "$source_dir/tools/arm64_sysroot.sh" "$sysroot"
  # The tests start arm64 programs from arm64 programs: only the kernel can
  # hand those to qemu.
  binfmt=/proc/sys/fs/binfmt_misc/qemu-aarch64
  if [[ ! -r "$binfmt" ]] || ! grep -qx enabled "$binfmt"; then
    echo "test.sh: the kernel runs no arm64 program through qemu (no enabled $binfmt): mount binfmt_misc" \
      "(mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc) and register qemu-aarch64" \
      "(update-binfmts --enable qemu-aarch64, or systemctl restart systemd-binfmt)" >&2
    exit 1
  fi
  build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/arm64}
  export HEAPLINE_ARM64_SYSROOT=$sysroot
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_TOOLCHAIN_FILE="$source_dir/cmake/aarch64-linux-gnu.cmake" >/dev/null
  fi
  # binfmt's qemu (no -L of its own) finds the arm64 loader and libraries
  # here: for the tests, and for the build's own runs of arm64 programs
  # (help2man reads the programs' --help).
  export QEMU_LD_PREFIX=$sysroot
  HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh"
  root=${HEAPLINE_ARM64_ROOT:-$source_dir/build/arm64-root}
  "$source_dir/tools/arm64_root.sh" make "$root"
  skipped=$(awk -F'\t' '!/^#/ && !/^[[:space:]]*$/ { print $1 }' "$source_dir/tools/arm64.skip" | paste -sd'|' -)
  echo "test.sh: arm64 under qemu-user in $root, without the tests tools/arm64.skip lists: ${skipped:-none}"
  exec "$source_dir/tools/arm64_root.sh" run "$root" "$source_dir" "$build_dir" "$sysroot" -- \
    ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" ${skipped:+-E "$skipped"} "$@"
fi
if ((sanitize)); then
  build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/sanitize}
  if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
    # -O2 with debug information: the tests' speed, and stacks in reports.
    cmake -S "$source_dir" -B "$build_dir" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DHEAPLINE_SANITIZE=ON \
      -DHEAPLINE_BUILD_BENCHMARKS=OFF >/dev/null
  fi
else
  build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
fi
HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh"

if ((!sanitize)); then
  exec ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@"
fi

# One ctest -E of the skipped tests' patterns (REGEX<TAB>REASON per line;
# awk, not grep: a list with no entry is not an error).
skipped=$(awk -F'\t' '!/^#/ && !/^[[:space:]]*$/ { print $1 }' "$source_dir/tools/sanitize.skip" | paste -sd'|' -)
echo "test.sh: under sanitizers, without the tests tools/sanitize.skip lists: ${skipped:-none}"
# Leaks are errors too; a report names its stack.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:detect_stack_use_after_return=1:check_initialization_order=1:strict_init_order=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
exec ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" ${skipped:+-E "$skipped"} "$@"
