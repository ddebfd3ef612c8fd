#!/usr/bin/env bash
# work_done_test.sh LIBRARY MIN_ALLOCS MIN_PEAK_BYTES -- COMMAND...
#
# A scenario that exits 0 without output could have done nothing: this runs
# COMMAND under libheapline.so and requires its report (whose call counts are
# exact in any precision) to count at least MIN_ALLOCS allocation calls and a
# peak of at least MIN_PEAK_BYTES, the work the scenario's arguments ask for.
set -euo pipefail
library=$1 min_allocs=$2 min_peak=$3
shift 3
[[ "${1:-}" == "--" ]] && shift
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

LD_PRELOAD=$library HEAPLINE_OUT=$work/report.json "$@"
python3 - "$work/report.json" "$min_allocs" "$min_peak" "$*" <<'PY'
import json, sys
path, min_allocs, min_peak, command = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
report = json.load(open(path))
allocs, peak = report["calls"]["alloc"], report["peak_bytes"]
if allocs < min_allocs or peak < min_peak:
    sys.exit(f"{command}: {allocs} allocations and a peak of {peak} B, "
             f"expected at least {min_allocs} and {min_peak} B: the work was not done")
print(f"{command}: {allocs} allocations, peak {peak} B")
PY
