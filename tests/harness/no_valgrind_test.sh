#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# Without valgrind on PATH: the points have no instruction figure, the run
# says so once (not once per scenario), nothing fails, and with valgrind the
# same commands record the figure (so the first half cannot pass by accident).
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/empty-path"
note='valgrind is not installed: the points have no instruction figure'

run_suite() {  # STORE [PATH]
  mkdir -p "$1"
  env PATH="${2:-$PATH}" "$bench" suite --store "$1" --out "$work/gen" --no-plots --scale 0.0005 --runs 1 \
    --only churn-1t,churn-4t --commit 0123456789abcdef0123456789abcdef01234567
}

# PATH holds no program at all: the scenarios' commands are absolute paths.
run_suite "$work/without" "$work/empty-path" >"$work/out" 2>"$work/err" || { cat "$work/err"; exit 1; }
[[ $(grep -c "$note" "$work/err") -eq 1 ]] || { echo "the missing valgrind must be said exactly once"; cat "$work/err"; exit 1; }
[[ $(grep -c . "$work/without/points.jsonl") -eq 2 ]]
[[ $(grep -c '"instructions":null' "$work/without/points.jsonl") -eq 2 ]]
"$bench" validate --store "$work/without" >/dev/null
# The page and check show the other figures, and the instruction cells as not measured.
grep -q '### CPU time and instructions' "$work/gen/performance.md"
grep -q '| `0123456` | [^|]* | [-+][0-9.]*% \[[^]]*\] · – | [-+][0-9.]*% \[[^]]*\] · – |' "$work/gen/performance.md" ||
  { cat "$work/gen/performance.md"; exit 1; }
# check of the default gate (instructions and cpu) says that the instruction
# figure is judged nowhere. (One point of each scenario judges nothing yet:
# --fail-on-regression would fail on that, check_test.sh.)
"$bench" check --store "$work/without" >"$work/check" 2>"$work/check-err"
if grep -q '| instructions' "$work/check"; then echo "a verdict on a figure the points do not have"; exit 1; fi
grep -q -- "--gate instructions: no newest point of a scenario of the catalogue has an instruction figure" \
  "$work/check-err" || { echo "an ungated instruction figure not said"; cat "$work/check-err"; exit 1; }

# overhead --instructions says so too, and still prints its figure.
env PATH="$work/empty-path" "$bench" overhead churn-1t "$(dirname "$bench")/libheapline.so" 1 --scale 0.0005 \
  --instructions --json >"$work/point.json" 2>"$work/err2"
[[ $(grep -c "$note" "$work/err2") -eq 1 ]]
grep -q '"instructions": null' "$work/point.json"

if command -v valgrind >/dev/null; then
  run_suite "$work/with" >/dev/null 2>"$work/err3" || { cat "$work/err3"; exit 1; }
  if grep -q "$note" "$work/err3"; then echo "valgrind is installed but said missing"; exit 1; fi
  [[ $(grep -c '"instructions":{"overhead":' "$work/with/points.jsonl") -eq 2 ]]
fi
echo "no valgrind: ok"
