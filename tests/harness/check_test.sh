#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# check_test.sh BENCH CASE
#
# check from the command line on a synthetic store (check): a flat history,
# then a regression on churn-4t in each of the three figures; a verdict per
# figure; exit status only with --fail-on-regression and only for the gated
# figures; GitHub annotations and run summary; the page marks the verdict
# and the change. calibrate at a tiny scale, for real (calibrate). One case
# per test, so that each stays short on a loaded machine.
set -euo pipefail
bench=$1 case_name=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

check() {
mkdir -p "$work/store"

# points.jsonl: 16 points per scenario with the three figures steady and
# small noise (the wall clock noisier), then, for churn-4t only, 6 more
# points, of which the last STEPPED are after a step: the wall clock and the
# CPU time from 3% to 15%, the instruction count from 14.00% to 14.60%.
# store: the newest point is the step; steps: the step was 6 points ago.
mkdir -p "$work/steps"
for stepped in 1 6; do
  [[ $stepped -eq 1 ]] && out=$work/store/points.jsonl || out=$work/steps/points.jsonl
  /usr/bin/python3 - "$out" "$stepped" <<'PY'
import json, random, sys
rng = random.Random(7)
first_stepped = 22 - int(sys.argv[2])
machine = {"fingerprint": "aaaabbbbcccc", "cpu_model": "Test CPU", "cores": 2, "kernel": "6.1",
           "glibc": "2.36", "compiler": "GNU 12", "runner_image": ""}
lines = []
for i in range(22):
    for scenario in ("churn-1t", "churn-4t", "resident-4t", "large-4t", "python"):
        if i >= 16 and scenario != "churn-4t":
            continue
        stepped = scenario == "churn-4t" and i >= first_stepped
        level = 0.15 if stepped else 0.03
        wall = level + rng.gauss(0, 0.004)
        cpu = level + rng.gauss(0, 0.002)
        instructions = (0.146 if stepped else 0.14) + rng.gauss(0, 0.0001)
        lines.append(json.dumps({"schema": 2, "scenario": scenario, "commit": "%02d" % (i + 1) + "c" * 38,
                                 "measured_at": "2026-11-%02dT00:00:00Z" % (i + 1), "overhead": wall,
                                 "interval": [wall - 0.006, wall + 0.006], "scale": 1.0,
                                 "cpu": {"overhead": cpu, "interval": [cpu - 0.003, cpu + 0.003]},
                                 "instructions": {"overhead": instructions, "with": 0, "without": 0},
                                 "timing": "command", "heapline_version": "0.5.0", "machine": machine}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
done

"$bench" check --store "$work/store" >"$work/out"
for figure in wall 'cpu (gated)'; do
  grep -qF "| \`churn-4t\` | $figure | \`22ccccc\` | +1" "$work/out" || { cat "$work/out"; exit 1; }
done
grep -q '| `churn-4t` | wall | `22ccccc` | +1[0-9]\.[0-9]% .* | \*\*regression\*\* |' "$work/out" || { cat "$work/out"; exit 1; }
grep -q '| `churn-4t` | cpu (gated) | `22ccccc` | +1[0-9]\.[0-9]% .* | \*\*regression\*\* |' "$work/out"
grep -q '| `churn-4t` | instructions (gated) | `22ccccc` | +14\.[56][0-9]% | +14\.0[0-9]% .* | \*\*regression\*\* |' "$work/out" ||
  { cat "$work/out"; exit 1; }
grep -q '| `churn-1t` | instructions (gated) | .* | \*\*unchanged\*\* |' "$work/out"
grep -q 'Gated: instructions, cpu\.' "$work/out"

# A calibration from before calibrate recorded its command is announced: it
# applies to no point that records one.
mkdir -p "$work/noted"
cp "$work/store/points.jsonl" "$work/noted/"
echo '{"scenario":"churn-4t","fingerprint":"aaaabbbbcccc","sigma":0.001,"figure":"cpu"}' >"$work/noted/calibration.jsonl"
"$bench" check --store "$work/noted" >/dev/null 2>"$work/noted.err"
grep -q 'note: 1 calibration(s) in .* do not say which command they measured .* run calibrate again' "$work/noted.err" ||
  { cat "$work/noted.err"; exit 1; }
"$bench" check --store "$work/store" 2>"$work/plain.err" >/dev/null
if grep -q 'note:' "$work/plain.err"; then cat "$work/plain.err"; exit 1; fi

# Six points after the step: the change point is found, and the newest point
# is judged against the segment after it, so the step raised one alarm, not
# six.
"$bench" check --store "$work/steps" --fail-on-regression >"$work/steps.out" || { cat "$work/steps.out"; exit 1; }
grep -q '### Change points' "$work/steps.out"
grep -q '`churn-4t` wall on `aaaabbbbcccc`: +[23]\.[0-9]% → +1[45]\.[0-9]% between `16ccccc` and `17ccccc`' "$work/steps.out" ||
  { cat "$work/steps.out"; exit 1; }
grep -q '`churn-4t` cpu on `aaaabbbbcccc`: +[23]\.[0-9]% → +1[45]\.[0-9]% between `16ccccc` and `17ccccc`' "$work/steps.out"
grep -q '`churn-4t` instructions on `aaaabbbbcccc`: +14\.0[0-9]% → +14\.[56][0-9]% between `16ccccc` and `17ccccc`' \
  "$work/steps.out"
for figure in wall 'cpu (gated)' 'instructions (gated)'; do
  grep -qF "| \`churn-4t\` | $figure | \`22ccccc\` |" "$work/steps.out"
done
[[ $(grep -c '| `churn-4t` | .* (5 since `17ccccc`) | .* | \*\*unchanged\*\* |' "$work/steps.out") -eq 3 ]] ||
  { cat "$work/steps.out"; exit 1; }

status=0
GITHUB_STEP_SUMMARY=$work/summary.md "$bench" check --store "$work/store" --github --fail-on-regression \
  >"$work/gh" 2>/dev/null || status=$?
[[ $status -eq 1 ]] || { echo "expected status 1 with --fail-on-regression, got $status"; exit 1; }
grep -q '^::error title=Overhead regression::churn-4t (instructions) at 22ccccc on Test, 2 cores: +14\.' "$work/gh"
grep -q '^::error title=Overhead regression::churn-4t (cpu) at 22ccccc on Test, 2 cores: +1' "$work/gh"
grep -q '^::warning title=Overhead regression (not gated)::churn-4t (wall) at 22ccccc' "$work/gh"
grep -q 'Overhead verdicts' "$work/summary.md"

# A point from the future (2099) is refused, not taken for the newest: the
# step measured before it is still the one check judges, and fails on.
mkdir -p "$work/future"
cp "$work/store/points.jsonl" "$work/future/"
/usr/bin/python3 - "$work/future/points.jsonl" <<'PY'
import json, sys
lines = open(sys.argv[1]).read().splitlines()
point = json.loads(lines[-1])
point.update(commit="99" + "c" * 38, measured_at="2099-01-01T00:00:00Z", overhead=0.03, interval=[0.02, 0.04])
open(sys.argv[1], "a").write(json.dumps(point) + "\n")
PY
status=0
"$bench" check --store "$work/future" --fail-on-regression >"$work/future.out" 2>"$work/future.err" || status=$?
[[ $status -eq 1 ]] || { echo "a point of 2099 hid the step (status $status)"; cat "$work/future.out"; exit 1; }
grep -q 'points.jsonl:87: field "measured_at" is in the future' "$work/future.err" || { cat "$work/future.err"; exit 1; }
grep -qF '| `churn-4t` | wall | `22ccccc` |' "$work/future.out"

# Only the gated figures fail the run: the wall clock alone does not.
"$bench" check --store "$work/store" --gate wall --fail-on-regression >/dev/null 2>&1 && { echo "wall gate passed"; exit 1; }
status=0
"$bench" check --store "$work/store" --gate instructions --min-effect-instructions 1 --fail-on-regression \
  >"$work/gate" 2>/dev/null || status=$?
[[ $status -eq 0 ]] || { echo "a 0.6-point instruction step below a 1-point minimum failed the run"; exit 1; }
# A check never passes a gate in silence: a gated figure that no newest
# point has (instructions counted without valgrind) is said, and when no
# gated figure was judged at all --fail-on-regression fails, in one line
# that says why: points of scenarios the catalogue does not hold (renamed
# or removed; those points are said by check and by render, never left out
# without a word), an empty store, a gate of a figure no point has (while
# the other figures regressed), a history too short for any verdict.
mkdir -p "$work/uncounted" "$work/renamed"
/usr/bin/python3 - "$work/store/points.jsonl" "$work" <<'PY'
import json, sys
points = [json.loads(line) for line in open(sys.argv[1])]
with open(sys.argv[2] + "/uncounted/points.jsonl", "w") as out:
    for p in points:
        p = dict(p, instructions=None)
        out.write(json.dumps(p) + "\n")
with open(sys.argv[2] + "/renamed/points.jsonl", "w") as out:
    for p in points:
        out.write(json.dumps(dict(p, scenario="old-" + p["scenario"])) + "\n")
PY
status=0
"$bench" check --store "$work/uncounted" --gate instructions --fail-on-regression >/dev/null 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || { echo "a gate of a figure never measured passed (status $status)"; cat "$work/err"; exit 1; }
grep -q "^check: --gate instructions: no newest point of a scenario of the catalogue has an instruction figure" "$work/err" ||
  { cat "$work/err"; exit 1; }
grep -q "^check: --fail-on-regression: no gated figure (instructions) was judged: no newest point of a scenario of the catalogue has one$" "$work/err" ||
  { cat "$work/err"; exit 1; }
# The figures it has judged still count: the default gate (instructions,
# cpu) fails on the cpu step of the same store.
status=0
"$bench" check --store "$work/uncounted" --fail-on-regression >/dev/null 2>"$work/err" || status=$?
[[ $status -eq 1 ]] && grep -q "^check: 1 regression(s) of a gated figure$" "$work/err" && ! grep -q "no gated figure" "$work/err" ||
  { echo "the cpu step of a store without instructions: status $status"; cat "$work/err"; exit 1; }
status=0
"$bench" check --store "$work/renamed" --fail-on-regression >/dev/null 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || { echo "points of no scenario of the catalogue passed the gate (status $status)"; exit 1; }
grep -q "^check: --fail-on-regression: no gated figure (instructions, cpu) was judged: no newest point of a scenario of the catalogue$" "$work/err" ||
  { cat "$work/err"; exit 1; }
grep -q "^heapline-bench: warning: 86 point(s) of scenarios the catalogue does not hold (old-churn-1t: 16, old-churn-4t: 22, old-large-4t: 16, old-python: 16, old-resident-4t: 16) are judged by no verdict$" "$work/err" ||
  { cat "$work/err"; exit 1; }
mkdir -p "$work/empty"
"$bench" check --store "$work/empty" >/dev/null 2>&1 || { echo "an empty store failed without --fail-on-regression"; exit 1; }
status=0
"$bench" check --store "$work/empty" --fail-on-regression >/dev/null 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || { echo "an empty store passed the gate (status $status)"; cat "$work/err"; exit 1; }
grep -q "^check: --fail-on-regression: no gated figure (instructions, cpu) was judged: the store holds no point$" "$work/err" ||
  { cat "$work/err"; exit 1; }
"$bench" render --store "$work/renamed" --out "$work/renamed-page" --no-plots >/dev/null 2>"$work/err"
grep -q "^heapline-bench: warning: 86 point(s) of scenarios the catalogue does not hold (.*) are not shown$" "$work/err" ||
  { cat "$work/err"; exit 1; }
if "$bench" check --store "$work/store" --gate cycles 2>"$work/err"; then echo "accepted --gate cycles"; exit 1; fi
grep -q -- "--gate: must name wall, cpu or instructions, got 'cycles'" "$work/err"

"$bench" render --store "$work/store" --out "$work/gen" --no-plots >/dev/null 2>&1
grep -q '▲ \*\*regression\*\*' "$work/gen/performance.md"
"$bench" render --store "$work/steps" --out "$work/gen-steps" --no-plots >/dev/null 2>&1
[[ $(grep -c '▲ \*\*regression\*\*' "$work/gen-steps/performance.md") -eq 1 ]] || { echo "one step, one mark"; exit 1; }
# The page names the change of each figure, not only the wall clock's.
for figure in wall cpu; do
  grep -q "^- \`churn-4t\` $figure on Test, 2 cores (\`aaaabbbbcccc\`): +[23]\.[0-9]% → +1[45]\.[0-9]%, between \`16ccccc\` and \`17ccccc\`" \
    "$work/gen-steps/performance.md" || { cat "$work/gen-steps/performance.md"; exit 1; }
done
grep -q '^- `churn-4t` instructions on Test, 2 cores (`aaaabbbbcccc`): +14\.0[0-9]% → +14\.[56][0-9]%, between' \
  "$work/gen-steps/performance.md"

# Two machines measure every commit, and the newest commit steps on the
# first only, while the second reports after it: check judges both
# machines' newest points, names each, and fails on the step; the page has
# a row per machine for the commit, the step marked in the first's.
mkdir -p "$work/two"
/usr/bin/python3 - "$work/two/points.jsonl" <<'PY'
import json, random, sys
rng = random.Random(9)
machines = [{"fingerprint": fingerprint, "cpu_model": model, "cores": 4, "kernel": "6.1", "glibc": "2.36",
             "compiler": "GNU 12", "runner_image": ""}
            for fingerprint, model in (("aaaa00000001", "AMD EPYC 7763 64-Core Processor"),
                                       ("bbbb00000002", "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz"))]
lines = []
for i in range(16):
    for m, machine in enumerate(machines):
        stepped = m == 0 and i == 15
        wall = (0.15 if stepped else 0.03) + rng.gauss(0, 0.004)
        lines.append(json.dumps({"schema": 2, "scenario": "churn-4t", "commit": "%02d" % (i + 1) + "d" * 38,
                                 "measured_at": "2026-11-%02dT00:0%d:00Z" % (i + 1, m), "overhead": wall,
                                 "interval": [wall - 0.006, wall + 0.006], "scale": 1.0,
                                 "timing": "command", "heapline_version": "0.5.0", "machine": machine}))
open(sys.argv[1], "w").write("\n".join(lines) + "\n")
PY
status=0
"$bench" check --store "$work/two" --gate wall --fail-on-regression >"$work/two.out" 2>/dev/null || status=$?
[[ $status -eq 1 ]] || { cat "$work/two.out"; echo "the step on one of two machines did not fail the run"; exit 1; }
grep -q '| `churn-4t` | wall (gated) | `16ddddd` | +1[0-9]\.[0-9]% .* | \*\*regression\*\* | AMD EPYC 7763 64-Core, 4 cores (`aaaa00000001`) |$' \
  "$work/two.out" || { cat "$work/two.out"; exit 1; }
grep -q '| `churn-4t` | wall (gated) | `16ddddd` | .* | \*\*unchanged\*\* | Intel Xeon Platinum 8370C, 4 cores (`bbbb00000002`) |$' \
  "$work/two.out" || { cat "$work/two.out"; exit 1; }
"$bench" render --store "$work/two" --out "$work/gen-two" --no-plots >/dev/null 2>&1
grep -q '^| `16ddddd` | AMD EPYC 7763 64-Core, 4 cores | .* ▲ \*\*regression\*\* |' "$work/gen-two/performance.md" ||
  { cat "$work/gen-two/performance.md"; exit 1; }
grep -q '^| `16ddddd` | Intel Xeon Platinum 8370C, 4 cores | ' "$work/gen-two/performance.md"

# Too few points: every verdict is "insufficient history", which is no
# regression and no failure, even of --fail-on-regression (a new machine's
# series starts so): one line says that nothing was judged yet.
head -n 10 "$work/store/points.jsonl" >"$work/short.jsonl"
mkdir -p "$work/short" && mv "$work/short.jsonl" "$work/short/points.jsonl"
"$bench" check --store "$work/short" | grep -q 'insufficient history'
status=0
"$bench" check --store "$work/short" --fail-on-regression >"$work/short.out" 2>"$work/err" || status=$?
[[ $status -eq 0 ]] || { echo "a history too short failed the gate (status $status)"; cat "$work/err"; exit 1; }
grep -q 'insufficient history' "$work/short.out"
grep -q "^check: no gated figure was judged yet: each newest point has insufficient history (fewer than 8 earlier points)$" "$work/err" ||
  { cat "$work/err"; exit 1; }

# Impossible rules are refused.
if "$bench" check --store "$work/store" --min-history 50 2>"$work/err"; then echo "accepted min-history > window"; exit 1; fi
grep -q -- "--min-history (50) must be at most --window (20)" "$work/err"
echo "check: ok"
}

# calibrate at a tiny scale: one line per scenario in calibration.jsonl, which
# check then reads (a calibrated noise larger than the history's never makes a
# regression appear).
calibrate() {
mkdir -p "$work/cal"
"$bench" calibrate --store "$work/cal" --only churn-1t,python --runs 2 --repeats 3 --scale 0.0005 \
  >"$work/cal.out" 2>"$work/cal.err" || { cat "$work/cal.err"; exit 1; }
grep -q '| `churn-1t` | wall | ±' "$work/cal.out"
grep -q '| `churn-1t` | cpu | ±.* | \(met\|\*\*not met\*\*\) (±5\.0 pts) |$' "$work/cal.out" || { cat "$work/cal.out"; exit 1; }
grep -q '| `churn-1t` | wall | ±.* | – |$' "$work/cal.out"
grep -q '^Spread goals (.*): [0-9] of [24] met\.$' "$work/cal.out"
figures=2
command -v valgrind >/dev/null && figures=3
[[ $(grep -c . "$work/cal/calibration.jsonl") -eq $((2 * figures)) ]]
/usr/bin/python3 - "$work/cal/calibration.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    c = json.loads(line)
    assert c["scale"] == 0.0005, c
    # the series the noise belongs to: the command at that scale
    timed = {"churn-1t": "malloc_churn 1 5000", "python": "python3 bench/python_churn.py 1"}
    counted = {"churn-1t": "malloc_churn 1 100", "python": "python3 bench/python_churn.py 1"}
    assert c["command"] == (counted if c["figure"] == "instructions" else timed)[c["scenario"]], c
    if c["figure"] == "instructions":
        # the A/A of counts: each count with the library against the first
        assert len(c["aa"]) == 2 and len(c["repeated"]) == 3, c
        assert c["sigma"] >= 0.0005 and c["detectable"] >= c["threshold"] >= 0.002, c
    else:
        assert c["figure"] in ("wall", "cpu"), c
        assert len(c["aa"]) == 3 and len(c["repeated"]) == 3, c
        assert c["sigma"] >= 0.005 and c["detectable"] >= c["threshold"] >= 0.02, c
PY
if "$bench" calibrate --store "$work/cal" --repeats 2 2>"$work/err"; then echo "accepted 2 repeats"; exit 1; fi
grep -q -- "--repeats: must be a whole number from 3 to 1000, got '2'" "$work/err"
echo "calibrate: ok"
}

"$case_name"
