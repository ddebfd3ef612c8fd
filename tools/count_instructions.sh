#!/usr/bin/env bash
# count_instructions.sh: what each scenario costs in instructions (callgrind),
# with no preload, the forwarding-only library, libheapline.so and glibc's
# libmemusage.so. Instruction counts repeat exactly run to run whatever else
# the machine does, so they complement the timed figures on a noisy machine
# (they do not see contention: libmemusage's real cost is its shared
# counters). The operation counts are the catalogue's reduced ones, since
# valgrind runs ~50x slower. Prints a Markdown table. Needs valgrind.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
bin=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}/bin
memusage=/usr/lib/x86_64-linux-gnu/libmemusage.so
command -v valgrind >/dev/null || { echo "count_instructions: valgrind is not installed" >&2; exit 1; }

count() {  # LIBRARY COMMAND... -> instructions
  local lib=$1
  shift
  local preload=()
  [[ -n "$lib" ]] && preload=("LD_PRELOAD=$lib")
  env "${preload[@]}" HEAPLINE_OUT=off PYTHONHASHSEED=0 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
    sed -n 's/.*Collected : //p' | tail -n 1
}

# The reduced commands are the catalogue's instructions_command, the same
# ones heapline-bench suite counts for each point's instruction figure.
catalogue=$source_dir/scenarios/scenarios.json
reduced() {  # SCENARIO -> the reduced command, one word a line
  python3 - "$catalogue" "$1" "$bin" "$source_dir" <<'PY'
import json, sys
catalogue, name, bin_dir, source = sys.argv[1:]
for scenario in json.load(open(catalogue))["scenarios"]:
    if scenario["name"] == name:
        for word in scenario["instructions_command"]:
            print(word.replace("{bin}", bin_dir).replace("{source}", source))
PY
}
scenarios=$(python3 -c 'import json, sys; print(" ".join(s["name"] for s in json.load(open(sys.argv[1]))["scenarios"]))' "$catalogue")
echo "| scenario (reduced) | no preload | forwarding only | heapline (vs floor) | libmemusage.so |"
echo "|---|---:|---:|---:|---:|"
for scenario in $scenarios; do
  mapfile -t command < <(reduced "$scenario")
  none=$(count "" "${command[@]}")
  floor=$(count "$bin/libheapline_null.so" "${command[@]}")
  heapline=$(count "$bin/libheapline.so" "${command[@]}")
  peer=$(count "$memusage" "${command[@]}")
  awk -v s="$scenario" -v a="$none" -v b="$floor" -v c="$heapline" -v d="$peer" 'BEGIN {
    printf "| %s | %d | %+.2f%% | %+.2f%% (%+.2f) | %+.1f%% |\n", s, a, (b/a-1)*100, (c/a-1)*100, (c/b-1)*100, (d/a-1)*100 }'
done
