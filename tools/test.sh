#!/usr/bin/env bash
# The test command of the README and of CI: set up, build, run every test.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}

"$source_dir/tools/setup.sh" --test
HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh"
ctest --test-dir "$build_dir" --output-on-failure --parallel "$(nproc)" "$@"
