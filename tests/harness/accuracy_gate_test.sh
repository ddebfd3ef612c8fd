#!/usr/bin/env bash
# The accuracy figure end to end: the suite runs the reduced command once
# under the accuracy build beside the measured library, stores the batched
# peak, the exact peak of the same run and the stated bound, and `check`
# fails a point whose error is outside the bound. A correct build passes; a
# build that loses every second publish (HEAPLINE_TEST_DROP_HALF_PUBLISHES)
# fails at its first point (and `heapline-bench accuracy` fails it); a failed
# accuracy run loses only the figure.
#   accuracy_gate_test.sh HEAPLINE_BENCH LIBHEAPLINE LIBHEAPLINE_ACCURACY LIBHEAPLINE_DROPS_PUBLISHES
set -euo pipefail
bench=$1 library=$2 accuracy=$3 drops=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

measure() {  # NAME ACCURACY_BUILD: a suite point of churn-4t, then check
  mkdir -p "$work/$1/store"
  cp "$library" "$work/$1/libheapline.so"
  cp "$2" "$work/$1/libheapline_accuracy.so"
  "$bench" suite --lib "$work/$1/libheapline.so" --only churn-4t --runs 2 --scale 0.02 --no-instructions \
    --no-plots --store "$work/$1/store" --out "$work/$1/page" \
    --commit 0123456789abcdef0123456789abcdef01234567 >"$work/$1/suite.out" 2>"$work/$1/suite.err" ||
    { echo "suite ($1) failed:"; cat "$work/$1/suite.err"; exit 1; }
  grep -q '"accuracy":{"batched_peak_bytes":' "$work/$1/store/points.jsonl" ||
    { echo "no accuracy figure in the point ($1):"; cat "$work/$1/store/points.jsonl"; exit 1; }
  status=0
  "$bench" check --store "$work/$1/store" --fail-on-regression >"$work/$1/check.out" 2>"$work/$1/check.err" ||
    status=$?
}

measure good "$accuracy"
# One point: no gated figure is judged yet (insufficient history, said in
# a line, no failure), and the accuracy verdict adds no failure of its own.
[[ $status -eq 0 ]] &&
  grep -q "^check: no gated figure was judged yet: each newest point has insufficient history" \
    "$work/good/check.err" && ! grep -q "outside the stated bound" "$work/good/check.err" ||
  { echo "the correct build failed check (status $status):"; cat "$work/good/check.out" "$work/good/check.err"; exit 1; }
grep -q '| `churn-4t` | `0123456` | .* | \*\*within the bound\*\* |' "$work/good/check.out" ||
  { cat "$work/good/check.out"; exit 1; }

measure drops "$drops"
[[ $status -eq 1 ]] && grep -q "^check: 1 scenario(s) with an error outside the stated bound$" "$work/drops/check.err" ||
  { echo "the build that drops publishes passed check (status $status):"; cat "$work/drops/check.out" "$work/drops/check.err"; exit 1; }
grep -q '| `churn-4t` | `0123456` | -[0-9]* B | [0-9]* B | \*\*outside the bound\*\* |' "$work/drops/check.out" ||
  { cat "$work/drops/check.out"; exit 1; }
# `heapline-bench accuracy` judges a command the same way, at once: its
# exit status says whether the error is inside the stated bound.
churn=("$(dirname "$bench")/malloc_churn" 4 20000 16 4096 64)
"$bench" accuracy --lib "$work/good/libheapline.so" -- "${churn[@]}" >"$work/good/accuracy.out" 2>&1 ||
  { echo "accuracy refused the correct build:"; cat "$work/good/accuracy.out"; exit 1; }
grep -q '^batched peak [0-9]* B, exact peak [0-9]* B: error .*, stated bound [0-9]* B' "$work/good/accuracy.out" ||
  { cat "$work/good/accuracy.out"; exit 1; }
# A verdict line is said only when it is true: the correct build's bound is
# within the error and the budget, so neither complaint appears.
if grep -q '^accuracy:' "$work/good/accuracy.out"; then
  echo "accuracy complained about the correct build:"; cat "$work/good/accuracy.out"; exit 1
fi
status=0
"$bench" accuracy --lib "$work/drops/libheapline.so" -- "${churn[@]}" >"$work/drops/accuracy.txt" 2>&1 || status=$?
[[ $status -eq 1 ]] || { echo "accuracy passed the build that drops publishes (status $status):"; cat "$work/drops/accuracy.txt"; exit 1; }
# Dropping publishes widens the error, not the bound: one complaint, the true one.
[[ "$(grep '^accuracy:' "$work/drops/accuracy.txt")" == "accuracy: the error is outside the stated bound" ]] ||
  { echo "the build that drops publishes got the wrong verdict lines:"; cat "$work/drops/accuracy.txt"; exit 1; }
status=0
"$bench" accuracy --lib "$work/drops/libheapline.so" --json -- "${churn[@]}" >"$work/drops/accuracy.out" 2>&1 || status=$?
[[ $status -eq 1 ]] || { echo "accuracy passed the build that drops publishes (status $status):"; cat "$work/drops/accuracy.out"; exit 1; }
grep -q '"within_bound": false' "$work/drops/accuracy.out" || { cat "$work/drops/accuracy.out"; exit 1; }
# The accuracy build's own report: the exact shadow ends where the exact
# final figure does (both count every byte at exit), and its peak is the
# batched peak's within the stated bound.
LD_PRELOAD="$accuracy" HEAPLINE_OUT="$work/shadow.json" "${churn[@]}"
python3 - "$work/shadow.json" <<'PY' || exit 1
import json, sys
r = json.load(open(sys.argv[1]))
shadow, bound = r["exact_shadow"], r["precision"]["bound_bytes"]
if shadow["final_bytes"] != r["final_bytes"]:
    sys.exit(f"exact shadow final {shadow['final_bytes']} != final {r['final_bytes']}")
if not shadow["peak_bytes"] > 0 or abs(shadow["peak_bytes"] - r["peak_bytes"]) > bound:
    sys.exit(f"exact shadow peak {shadow['peak_bytes']} vs peak {r['peak_bytes']} +/- {bound}")
PY
# An accuracy run that fails (here a build without the exact shadow in its
# place) costs the point its accuracy figure, never the point.
mkdir -p "$work/plain"
mkdir -p "$work/plain/store"
cp "$library" "$work/plain/libheapline.so"
cp "$library" "$work/plain/libheapline_accuracy.so"
"$bench" suite --lib "$work/plain/libheapline.so" --only churn-4t --runs 2 --scale 0.02 --no-instructions \
  --no-plots --store "$work/plain/store" --out "$work/plain/page" \
  --commit 0123456789abcdef0123456789abcdef01234567 >/dev/null 2>"$work/plain/suite.err" ||
  { echo "a failed accuracy run failed the suite:"; cat "$work/plain/suite.err"; exit 1; }
grep -q "churn-4t: no accuracy figure: .*has no exact_shadow" "$work/plain/suite.err" || { cat "$work/plain/suite.err"; exit 1; }
grep -q '"scenario":"churn-4t"' "$work/plain/store/points.jsonl" || { echo "the point was lost"; exit 1; }
if grep -q '"accuracy":{' "$work/plain/store/points.jsonl"; then echo "an accuracy figure without a shadow"; exit 1; fi
echo "accuracy gate: ok"
