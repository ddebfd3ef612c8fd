#!/usr/bin/env bash
# validate and import from the command line: bad lines named with their line
# number, imports that skip what is already there, refusals that change nothing.
set -euo pipefail
bench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" | grep -q "imported 4 point"
"$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" | grep -q "imported 0 point"
"$bench" validate --store "$work/store" | grep -q "4 valid point(s), 0 bad line(s)"

printf '{"measured_at": "2025-01-01T00:00:00Z", "overhead": "x"}\n' >>"$work/store/points.jsonl"
printf '{"measured_at": "2025-01-01T00:00:00Z", "ove' >>"$work/store/points.jsonl"
before=$(md5sum <"$work/store/points.jsonl")
status=0
"$bench" validate --store "$work/store" >"$work/out" 2>"$work/err" || status=$?
[[ $status -eq 1 ]]
grep -q "points.jsonl:5: " "$work/err"
grep -q "points.jsonl:6: the last line is incomplete" "$work/err"

# Importing into a store with bad lines is refused; importing a bad file too.
if "$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" 2>"$work/err"; then
  echo "import into a damaged store was accepted"; exit 1
fi
grep -q "Nothing was imported" "$work/err"
[[ "$(md5sum <"$work/store/points.jsonl")" == "$before" ]] || { echo "the store changed"; exit 1; }
printf 'not json\n' >"$work/bad.jsonl"
if "$bench" import --store "$work/other" "$work/bad.jsonl" 2>"$work/err"; then echo "bad file accepted"; exit 1; fi
grep -q "bad.jsonl:1: " "$work/err"
[[ ! -e "$work/other/points.jsonl" ]]

# Rendering a damaged store still writes the page, and the page says so.
"$bench" render --store "$work/store" --out "$work/gen" --no-plots >/dev/null 2>"$work/err"
grep -q "could not be read" "$work/gen/performance.md"
grep -q "warning: .*points.jsonl:5" "$work/err"
echo "store from the command line: ok"

# The same point twice: validate names the duplicate and fails.
mkdir -p "$work/dup"
head -n 1 "$work/store/points.jsonl" >"$work/dup/points.jsonl"
head -n 1 "$work/store/points.jsonl" >>"$work/dup/points.jsonl"
if "$bench" validate --store "$work/dup" >"$work/out" 2>"$work/err"; then echo "a duplicate passed validate"; exit 1; fi
grep -q "points.jsonl:2: the same point as line 1" "$work/err"
grep -q "1 duplicate(s)" "$work/out"

# A file that holds the same point twice is refused whole, as validate would
# refuse it; the same file named twice imports its points once.
mkdir -p "$work/into"
if "$bench" import --store "$work/into" "$work/dup/points.jsonl" >"$work/out" 2>"$work/err"; then
  echo "a file with a duplicate inside it was imported"; exit 1
fi
grep -q "points.jsonl:2: the same point as line 1 (a duplicate)" "$work/err" || { cat "$work/err"; exit 1; }
grep -q "Nothing was imported" "$work/err"
[[ ! -s "$work/into/points.jsonl" ]] || { echo "a point of a refused file was stored"; exit 1; }
head -n 2 "$source_dir/tests/fixtures/legacy_points.jsonl" >"$work/two.jsonl"
"$bench" import --store "$work/into" "$work/two.jsonl" "$work/two.jsonl" | grep -q "imported 2 point(s)"
"$bench" validate --store "$work/into" | grep -q "2 valid point(s), 0 bad line(s), 0 duplicate(s)"
echo "imports of duplicates: ok"
