# shellcheck shell=bash
# Sourced, never run: where the scripts find libheapline.so. The programs'
# rule (heapline/install_layout.h, heapline_library) is the same: a build
# tree puts it in bin/, beside the programs and the other preload libraries.

# heapline_library BIN_DIR: the libheapline.so of the build whose programs
# are in BIN_DIR.
heapline_library() { printf '%s/libheapline.so' "$1"; }

# comparison_build COMPARE_DIR REPO COMMIT: the build directory that
# tools/compare_releases.sh gives COMMIT of REPO, keyed by the commit's tree:
# refs with the same sources (a merge that changed nothing, a tag on the
# same commit) share one build.
comparison_build() {
  local tree
  tree=$(git -C "$2" rev-parse --verify --quiet "$3^{tree}") || return 1
  printf '%s/build-%s' "$1" "$tree"
}

# built_library BUILD_DIR: the libheapline.so that a build of any commit
# left in BUILD_DIR (an older commit's build tree may place it elsewhere
# than bin/); nothing, and status 1, when there is none.
built_library() {
  local lib
  lib=$(find "$1" -name libheapline.so -type f 2>/dev/null | head -n 1)
  [[ -n "$lib" ]] && printf '%s' "$lib"
}
