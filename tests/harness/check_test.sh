#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# check from the command line on a synthetic store: a flat history, then a
# regression on churn-4t; exit status only with --fail-on-regression; GitHub
# annotations and run summary; the page marks the verdict and the change.
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/store"

# points.jsonl: 16 points per scenario at a steady overhead with small noise,
# then, for churn-4t only, 6 points after a step from 3% to 15%.
/usr/bin/python3 - "$work/store/points.jsonl" <<'PY'
import json, random, sys
rng = random.Random(7)
machine = {"fingerprint": "aaaabbbbcccc", "cpu_model": "Test CPU", "cores": 2, "kernel": "6.1",
           "glibc": "2.36", "compiler": "GNU 12", "runner_image": ""}
lines = []
for i in range(22):
    for scenario in ("churn-1t", "churn-4t", "resident-4t", "large-4t", "python"):
        if i >= 16 and scenario != "churn-4t":
            continue
        level = 0.15 if (scenario == "churn-4t" and i >= 16) else 0.03
        overhead = level + rng.gauss(0, 0.004)
        lines.append(json.dumps({"schema": 1, "scenario": scenario, "commit": "%02d" % (i + 1) + "c" * 38,
                                 "measured_at": "2026-11-%02dT00:00:00Z" % (i + 1), "overhead": overhead,
                                 "interval": [overhead - 0.006, overhead + 0.006], "timing": "command",
                                 "heapline_version": "0.1.0", "machine": machine}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY

"$bench" check --store "$work/store" >"$work/out"
grep -q '| `churn-4t` | `22ccccc` | +1[0-9]\.[0-9]% .* | \*\*regression\*\* |' "$work/out" || { cat "$work/out"; exit 1; }
grep -q '| `churn-1t` | .* | \*\*unchanged\*\* |' "$work/out"
grep -q '### Change points' "$work/out"
grep -q '`churn-4t` on `aaaabbbbcccc`: +[23]\.[0-9]% → +1[45]\.[0-9]% between `16ccccc` and `17ccccc`' "$work/out" ||
  { cat "$work/out"; exit 1; }

status=0
GITHUB_STEP_SUMMARY=$work/summary.md "$bench" check --store "$work/store" --github --fail-on-regression \
  >"$work/gh" 2>/dev/null || status=$?
[[ $status -eq 1 ]] || { echo "expected status 1 with --fail-on-regression, got $status"; exit 1; }
grep -q '^::error title=Overhead regression::churn-4t at 22ccccc: +1' "$work/gh"
grep -q 'Overhead verdicts' "$work/summary.md"

"$bench" render --store "$work/store" --out "$work/gen" --no-plots >/dev/null 2>&1
grep -q '▲ \*\*regression\*\*' "$work/gen/performance.md"
grep -q '^- `churn-4t` (machine `aaaabbbbcccc`): +[23]\.[0-9]% → ' "$work/gen/performance.md"

# Too few points: every verdict is "insufficient history", and never fails.
head -n 10 "$work/store/points.jsonl" >"$work/short.jsonl"
mkdir -p "$work/short" && mv "$work/short.jsonl" "$work/short/points.jsonl"
"$bench" check --store "$work/short" --fail-on-regression | grep -q 'insufficient history'

# Impossible rules are refused.
if "$bench" check --store "$work/store" --min-history 50 2>"$work/err"; then echo "accepted min-history > window"; exit 1; fi
grep -q -- "--min-history at most --window" "$work/err"
echo "check: ok"

# calibrate at a tiny scale: one line per scenario in calibration.jsonl, which
# check then reads (a calibrated noise larger than the history's never makes a
# regression appear).
"$bench" calibrate --store "$work/cal" --only churn-1t,python --runs 2 --repeats 3 --scale 0.0005 \
  >"$work/cal.out" 2>"$work/cal.err" || { cat "$work/cal.err"; exit 1; }
grep -q '| `churn-1t` | ±' "$work/cal.out"
[[ $(grep -c . "$work/cal/calibration.jsonl") -eq 2 ]]
/usr/bin/python3 - "$work/cal/calibration.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    assert len(c["aa"]) == 3 and len(c["repeated"]) == 3, c
    assert c["sigma"] >= 0.005 and c["detectable"] >= c["threshold"] >= 0.02, c
PY
if "$bench" calibrate --store "$work/cal" --repeats 2 2>"$work/err"; then echo "accepted 2 repeats"; exit 1; fi
grep -q -- "--repeats must be at least 3" "$work/err"
echo "calibrate: ok"
