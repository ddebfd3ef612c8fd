#!/usr/bin/env bash
# run_overhead.sh SCENARIO LIB RUNS -- COMMAND...
#
# Measures what preloading LIB costs COMMAND: RUNS interleaved runs with and
# without LD_PRELOAD=LIB (after one warm-up pair), as median(with) /
# median(without) - 1 with a 95% bootstrap interval. LIB may be "none" for an
# A/A run, which shows the noise floor of this machine. SCENARIO names the
# catalogue entry the figure belongs to; without a COMMAND the catalogue's
# command is run. Extra options for heapline-bench (--json, --scale F) may
# come before SCENARIO.
#
# Uses heapline-bench from $HEAPLINE_BUILD_DIR (default build/release),
# building it first when it is missing.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build_dir=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}
bench=$build_dir/bin/heapline-bench

if [[ $# -lt 3 ]]; then
  echo "usage: bench/run_overhead.sh [--json] [--scale F] SCENARIO LIB RUNS [-- COMMAND...]" >&2
  exit 2
fi
if [[ ! -x "$bench" ]]; then
  HEAPLINE_BUILD_DIR=$build_dir "$source_dir/tools/build.sh" >&2
fi
exec "$bench" overhead "$@"
