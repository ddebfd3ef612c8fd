#!/usr/bin/env bash
# What a new user does with heapline's Debian package, run inside a clean
# Debian root by tools/clean_root_check.sh: install it, use it from /, build
# against it, remove it. Each step prints the command it stands for.
#
#   session.sh /tmp/heapline_VERSION_ARCH.deb
set -euo pipefail
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
deb=$1
cd /
export DEBIAN_FRONTEND=noninteractive

step() {
  printf '\n$ %s\n' "$1"
  shift
  "$@"
}
install_all() {
  apt-get install -y -qq "$deb" python3 gcc libc6-dev pkg-config cmake make man-db >/tmp/apt.log 2>&1 ||
    { cat /tmp/apt.log; return 1; }
  grep -v '^debconf:' /tmp/apt.log | tail -n 3
}
not_installed() {
  if dpkg-query -W heapline >/dev/null 2>&1; then
    echo "heapline is installed in this root already: not a clean root" >&2
    return 1
  fi
  echo "heapline is not installed"
}
man_page() { MANWIDTH=80 man heapline 2>/dev/null | head -n 14; }
pkg_config_build() {
  # shellcheck disable=SC2046 # pkg-config's flags are words
  gcc /tmp/marker.c $(pkg-config --cflags --libs heapline) -o /tmp/marker
}
marker_names() { grep -o '"markers":\[[^]]*\][^]]*\]' /tmp/marker.json; }
cmake_build() {
  cmake -S /tmp/cmake-project -B /tmp/cmake-build >/dev/null
  cmake --build /tmp/cmake-build >/dev/null
  ls -l /tmp/cmake-build/marker
}
leftovers() {
  local left=0 file
  while read -r file; do
    if [[ -f "$file" || -L "$file" ]]; then
      echo "left behind: $file"
      left=1
    fi
  done </tmp/heapline.files
  ((left == 0)) && echo "no file of the package is left"
}

step "dpkg-query -W heapline" not_installed
step "apt-get update" apt-get update -qq
step "apt-get install ./${deb##*/} python3 gcc libc6-dev pkg-config cmake make man-db" install_all
step "heapline --version" heapline --version
step "heapline --summary -- python3 -c 'x = [bytes(1000) for _ in range(20000)]'" \
  heapline --summary -- python3 -c 'x = [bytes(1000) for _ in range(20000)]'

cat >/tmp/two_sites.c <<'C'
#include <stdlib.h>
#include <string.h>
static void* keep(size_t n) { void* p = malloc(n); memset(p, 1, n); return p; }
static void* small_blocks[64];
int main(void) {
  for (int i = 0; i < 64; ++i) small_blocks[i] = keep(1 << 20);
  void* big = keep(16 << 20);
  for (int i = 0; i < 64; ++i) free(small_blocks[i]);
  free(big);
  return 0;
}
C
step "gcc -g -O0 -o a.out two_sites.c" gcc -g -O0 -o /tmp/a.out /tmp/two_sites.c
step "heapline --profile --summary -- ./a.out" heapline --profile --summary -- /tmp/a.out
step "man heapline | head -n 14" man_page
step "man -w heapline-bench" man -w heapline-bench

cat >/tmp/marker.c <<'C'
#include <heapline.h>
#include <stdlib.h>
int main(void) {
  heapline_mark("start");
  free(malloc(1 << 20));
  heapline_mark("done");
  return 0;
}
C
step "pkg-config --cflags --libs heapline" pkg-config --cflags --libs heapline
step "gcc marker.c \$(pkg-config --cflags --libs heapline) -o marker" pkg_config_build
step "heapline -q --out marker.json -- ./marker" heapline -q --out /tmp/marker.json -- /tmp/marker
step "grep -o '\"markers\":...' marker.json" marker_names

mkdir -p /tmp/cmake-project
cat >/tmp/cmake-project/CMakeLists.txt <<'C'
cmake_minimum_required(VERSION 3.16)
project(uses_heapline C)
find_package(heapline REQUIRED)
add_executable(marker /tmp/marker.c)
target_link_libraries(marker PRIVATE heapline::api)
C
step "cat CMakeLists.txt" cat /tmp/cmake-project/CMakeLists.txt
step "cmake -S . -B build && cmake --build build" cmake_build

dpkg -L heapline | sort >/tmp/heapline.files
step "dpkg -L heapline | wc -l" wc -l /tmp/heapline.files
step "apt-get remove heapline" apt-get remove -y -qq heapline
step "is any file dpkg -L listed still there?" leftovers
