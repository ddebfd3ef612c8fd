#!/usr/bin/env bash
# bench/run_overhead.sh end to end: a scaled-down malloc_churn with the
# forwarding-only library, as a summary and as a JSON point.
set -euo pipefail
source_dir=$1 bin_dir=$2
HEAPLINE_BUILD_DIR=$(dirname "$bin_dir")
export HEAPLINE_BUILD_DIR
run=$source_dir/bench/run_overhead.sh
churn=$bin_dir/malloc_churn
null=$bin_dir/libheapline_null.so

summary=$("$run" churn-1t "$null" 3 -- "$churn" 1 20000)
grep -qE '^  overhead  [+-][0-9]+\.[0-9]% \[-?[0-9]+\.[0-9], -?[0-9]+\.[0-9]\]' <<<"$summary" \
  || { echo "no overhead line in:"; echo "$summary"; exit 1; }
grep -q "libheapline_null.so" <<<"$summary"

json=$("$run" --json churn-4t "$null" 4 -- "$churn" 4 5000)
/usr/bin/python3 - "$json" "$(git -C "$source_dir" rev-parse --verify -q HEAD || true)" <<'PY'
import json, sys
point = json.loads(sys.argv[1])
assert point["scenario"] == "churn-4t", point["scenario"]
assert point["runs"] == 4
assert len(point["raw"]["with"]) == 4 and len(point["raw"]["without"]) == 4
assert all(r["wall_s"] > 0 for r in point["raw"]["with"] + point["raw"]["without"])
low, high = point["interval"]
assert low <= point["overhead"] <= high, (low, point["overhead"], high)
assert point["timing"] == "command"
assert point["library"].endswith("libheapline_null.so")
assert point["machine"]["fingerprint"]
commit = sys.argv[2]
assert point["commit"] == commit, (point["commit"], commit)
PY

# A/A: the same command on both sides, no library.
aa=$("$run" --json churn-1t none 3 -- "$churn" 1 20000)
/usr/bin/python3 -c 'import json,sys; p=json.loads(sys.argv[1]); assert p["library"]=="none", p' "$aa"

# The library's settings come from the measurement alone: a shell that
# exported HEAPLINE_PRECISION=exact measured in exact mode (a publish per
# call) and stored the point as one of the defaults. The setting is left
# out, and said once.
exported=$(HEAPLINE_PRECISION=exact HEAPLINE_SAMPLE=on "$run" --json churn-1t "$bin_dir/libheapline.so" 2 -- "$churn" 1 20000 \
  2>"$PWD/exported.err")
/usr/bin/python3 -c 'import json,sys; p=json.loads(sys.argv[1]); r=p["library_report"]["publishes_per_1000_calls"]; assert r is not None and r < 100, r' "$exported"
[[ $(grep -c "note: HEAPLINE_PRECISION, HEAPLINE_SAMPLE in the environment are not passed to the measured commands" "$PWD/exported.err") -eq 1 ]] ||
  { echo "the settings left out were not said once:"; cat "$PWD/exported.err"; exit 1; }
rm -f "$PWD/exported.err"

# The catalogue's own command, scaled down.
"$run" --scale 0.001 churn-1t "$null" 2 >/dev/null

# Nothing left behind in the working directory.
if compgen -G "heapline.*.json" >/dev/null; then echo "heapline output files left in $(pwd)"; exit 1; fi
echo "run_overhead.sh end to end: ok"
