#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# suite_test.sh BENCH CASE [SCENARIO]
#
# The suite end to end at a tiny scale into a temporary store: one scenario
# of the catalogue with the commit it measured and the page rendered
# (scenario NAME, one case per scenario); every scenario of a catalogue
# without --only (every_scenario); a second run that appends with --only and
# --commit-range (appends); a failing scenario that does not stop the others
# (failing_scenario); a bad --commit-range and a store that cannot be
# appended to or a page that cannot be written, refused before anything is
# measured (refusals). One case per
# test, so that each stays short on a loaded machine.
set -euo pipefail
bench=$1 case_name=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/store" "$work/failing"
count() { grep -c . "$work/store/points.jsonl"; }

# One scenario of the catalogue, measured as the suite measures it (timed
# runs and instruction counts), its point and its row on the page.
scenario() {
  local scenario=$1
  "$bench" suite --store "$work/store" --out "$work/gen" --scale 0.0005 --runs 2 --only "$scenario" \
    --commit 0123456789abcdef0123456789abcdef01234567 >"$work/table" 2>"$work/log"
  [[ $(count) -eq 1 ]] || { echo "expected 1 point"; cat "$work/log"; exit 1; }
  grep -q "| \`$scenario\`" "$work/table" || { echo "no row for $scenario"; cat "$work/table"; exit 1; }
  grep -q '"commit":"0123456789abcdef0123456789abcdef01234567"' "$work/store/points.jsonl"
  # Where the time went: the scenario's timed runs (and counts), then the whole.
  grep -q "^$scenario: .* (timed runs [0-9.]* s\(, instruction counts [0-9.]* s\)\?)$" "$work/log" ||
    { echo "no phase times for $scenario"; cat "$work/log"; exit 1; }
  grep -q '^suite: 1 scenario(s) in [0-9.]* s (timed runs [0-9.]* s, instruction counts [0-9.]* s, render [0-9.]* s); 1 point appended to ' \
    "$work/log" || { cat "$work/log"; exit 1; }
  grep -q '| `0123456` |' "$work/gen/performance.md"
  "$bench" validate --store "$work/store" >/dev/null
}

# Without --only, the suite measures every scenario of its catalogue (here
# three quick ones, so that the case stays short).
every_scenario() {
  cat >"$work/catalogue.json" <<JSON
{"scenarios": [
  {"name": "churn-1t", "command": ["{bin}/malloc_churn", "1", "1000"]},
  {"name": "true", "command": ["/bin/true"]},
  {"name": "sh", "command": ["/bin/sh", "-c", "exit 0"]}
]}
JSON
  "$bench" --catalogue "$work/catalogue.json" suite --store "$work/store" --out "$work/gen" --runs 2 \
    --no-instructions --commit 0123456789abcdef0123456789abcdef01234567 >"$work/table" 2>"$work/log"
  [[ $(count) -eq 3 ]] || { echo "expected 3 points"; cat "$work/log"; exit 1; }
  for scenario in churn-1t true sh; do
    grep -q "| \`$scenario\`" "$work/table" || { echo "no row for $scenario"; cat "$work/table"; exit 1; }
  done
  grep -q '^suite: 3 scenario(s) in ' "$work/log" || { cat "$work/log"; exit 1; }
}

appends() {
  # Timed runs only: the counts are the scenario cases' (callgrind makes
  # python a minute long on a loaded machine).
  "$bench" suite --store "$work/store" --out "$work/gen" --scale 0.0005 --runs 2 --no-instructions --only churn-1t \
    --commit 0123456789abcdef0123456789abcdef01234567 >/dev/null 2>&1
  [[ $(count) -eq 1 ]] || { echo "expected 1 point after the first run"; exit 1; }
  # A second run appends; --only and --commit-range are honoured.
  "$bench" suite --store "$work/store" --out "$work/gen" --scale 0.0005 --runs 2 --no-instructions --only churn-1t,python \
    --commit-range aaaaaaa..bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb >/dev/null 2>&1
  [[ $(count) -eq 3 ]] || { echo "expected 3 points after the second run"; exit 1; }
  grep -q '"commit_range":{"first":"aaaaaaa","last":"bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"}' "$work/store/points.jsonl"
  grep -q '`aaaaaaa...bbbbbbb`' "$work/gen/performance.md"
  "$bench" validate --store "$work/store" >/dev/null
}

failing_scenario() {
  # A scenario that fails is reported, the others still run, the status says so.
  cat >"$work/catalogue.json" <<JSON
{"scenarios": [
  {"name": "churn-1t", "command": ["{bin}/malloc_churn", "1", "1000"]},
  {"name": "broken", "command": ["/bin/sh", "-c", "echo no such input >&2; exit 4"]},
  {"name": "python", "command": ["/usr/bin/python3", "{source}/bench/python_churn.py", "1"]}
]}
JSON
  local status=0
  "$bench" --catalogue "$work/catalogue.json" suite --store "$work/failing" --out "$work/gen2" --runs 2 \
    >"$work/table2" 2>"$work/log2" || status=$?
  [[ $status -eq 1 ]] || { echo "expected status 1, got $status"; cat "$work/log2"; exit 1; }
  grep -q "broken: FAILED" "$work/log2"
  grep -q "no such input" "$work/log2"
  [[ $(grep -c . "$work/failing/points.jsonl") -eq 2 ]] || { echo "the other two scenarios must be recorded"; exit 1; }
}

refusals() {
  # A bad --commit-range records nothing.
  if "$bench" suite --store "$work/store" --only churn-1t --commit-range nonsense >/dev/null 2>&1; then
    echo "a bad --commit-range was accepted"; exit 1
  fi
  [[ ! -s "$work/store/points.jsonl" ]] || { echo "a bad --commit-range recorded a point"; exit 1; }
  # A store that cannot be appended to is refused before the first run: no
  # scenario is measured for nothing.
  mkdir -p "$work/blocked/points.jsonl"
  if "$bench" suite --store "$work/blocked" --out "$work/gen3" --scale 0.0005 --runs 2 >"$work/out" 2>"$work/err"; then
    echo "suite into a store that cannot be appended to succeeded"; exit 1
  fi
  grep -q "Nothing was measured" "$work/err"
  if grep -q "^churn-1t:" "$work/err"; then echo "a scenario was measured for a store that cannot take it"; exit 1; fi
  # The page's outputs too, as render checks them (a link for the page, a
  # file for --out): refused in one line before the first run, nothing
  # measured or appended, so that a retried suite never stores its commit twice.
  mkdir -p "$work/linked" "$work/pages"
  ln -s /etc/hostname "$work/linked/performance.md"
  : >"$work/afile"
  for out in "$work/linked" "$work/afile"; do
    local status=0
    "$bench" suite --store "$work/pages" --out "$out" --scale 0.0005 --runs 2 --no-instructions --no-plots \
      --only churn-1t --commit abc7777 >"$work/out" 2>"$work/err" || status=$?
    [[ $status -eq 1 ]] || { echo "--out $out: expected status 1, got $status"; cat "$work/err"; exit 1; }
    [[ $(grep -c . "$work/err") -eq 1 ]] || { echo "--out $out: not one line"; cat "$work/err"; exit 1; }
    grep -q "^heapline-bench: $out/performance.md: .*Nothing was measured\.$" "$work/err" ||
      { echo "--out $out: $(cat "$work/err")"; exit 1; }
    [[ ! -s "$work/pages/points.jsonl" ]] || { echo "--out $out: a point was appended"; exit 1; }
  done
}

shift 2
"$case_name" "$@"
echo "suite end to end, $case_name $*: ok"
