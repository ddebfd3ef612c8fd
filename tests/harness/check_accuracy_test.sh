#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# check's accuracy verdict: the newest point of a scenario whose batched
# peak is farther from the exact peak than its stated bound fails the run
# with --fail-on-regression, whatever --gate names; within the bound, or an
# older point outside it, passes.
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# DIRECTORY ERROR_OF_THE_NEWEST_POINT: nine churn-1t points, bound 1000 B;
# eight before the newest, enough history for its wall figure's verdict (a
# check that judged no gated figure fails --fail-on-regression by itself).
store() {
  mkdir -p "$1"
  /usr/bin/python3 - "$1/points.jsonl" "$2" <<'PY'
import json, sys
lines = []
for i, error in enumerate([5000] * 8 + [int(sys.argv[2])]):  # the older ones far outside: not judged
    accuracy = {"batched_peak_bytes": 100000 + error, "exact_peak_bytes": 100000, "bound_bytes": 1000}
    lines.append(json.dumps({"schema": 2, "scenario": "churn-1t", "commit": "%02d" % (i + 1) + "c" * 38,
                             "measured_at": "2026-11-%02dT00:00:00Z" % (i + 1), "overhead": 0.03,
                             "interval": [0.02, 0.04], "library_report": {"accuracy": accuracy}}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
}

store "$work/outside" -1001
status=0
"$bench" check --store "$work/outside" --gate wall --fail-on-regression >"$work/out" 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || { echo "an error of -1001 B against a bound of 1000 B: status $status, expected 1"; exit 1; }
grep -qF '| `churn-1t` | `09ccccc` | -1001 B | 1000 B | **outside the bound** |' "$work/out" || { cat "$work/out"; exit 1; }
grep -q "1 scenario(s) with an error outside the stated bound" "$work/err"

store "$work/within" -1000
"$bench" check --store "$work/within" --gate wall --fail-on-regression >"$work/out" 2>"$work/err" ||
  { echo "an error of -1000 B against a bound of 1000 B failed the run"; cat "$work/out" "$work/err"; exit 1; }
grep -qF '| `churn-1t` | `09ccccc` | -1000 B | 1000 B | **within the bound** |' "$work/out" || { cat "$work/out"; exit 1; }
echo "check accuracy: ok"
