#!/usr/bin/env bash
# count_instructions.sh [INSTRUCTIONS OPTIONS...]: what each scenario costs in
# instructions (callgrind) with the forwarding-only library, libheapline.so
# and glibc's libmemusage.so, each against the command without a preload.
# Instruction counts repeat run to run whatever else the machine does, so
# they complement the timed figures on a noisy machine (they do not see
# contention: libmemusage's real cost is its shared counters). The counts
# are `heapline-bench instructions`', the suite's own for a point: the
# catalogue's reduced commands (instructions_command), since valgrind runs
# ~50x slower. heapline's cost over the floor is the difference of the two
# columns. Prints a Markdown table; options go to heapline-bench
# instructions (--only NAME[,NAME], --scale F, --json). Needs valgrind and a
# build (tools/build.sh).
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/library.sh
source "$source_dir/tools/lib/library.sh"
bin=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}/bin
memusage=/usr/lib/$(gcc -print-multiarch)/libmemusage.so
command -v valgrind >/dev/null || { echo "count_instructions: valgrind is not installed" >&2; exit 1; }
exec "$bin/heapline-bench" instructions --lib "$bin/libheapline_null.so" --lib "$(heapline_library "$bin")" \
  --lib "$memusage" "$@"
