#!/usr/bin/env bash
# validate and import from the command line: bad lines named with their line
# number, imports that skip what is already there, refusals that change nothing.
set -euo pipefail
bench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$work/store" "$work/other" "$work/fresh-store" "$work/into"
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

# A file cut mid-record (an interrupted write or copy): its import is one
# line that names the file, the line and the byte where it is cut, says
# nothing of the store's own rule for its torn lines (the file is not the
# store), and imports nothing, not even its whole lines; validate on a store
# cut alike adds what the next append does.
fixture=$source_dir/tests/fixtures/legacy_points.jsonl
head -c 500 "$fixture" >"$work/cut.jsonl"
status=0
"$bench" import --store "$work/fresh-store" "$work/cut.jsonl" >"$work/out" 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || { echo "import of a cut file exited $status"; exit 1; }
line=$(( $(head -c 500 "$fixture" | wc -l) + 1 ))
into=$(( 500 - $(head -c 500 "$fixture" | wc -l | xargs -I{} sh -c "head -n {} '$fixture' | wc -c") ))
expected="heapline-bench: cannot import $work/cut.jsonl:$line: the last line is incomplete: the file is cut $into bytes into it, at byte 500, with no newline (a write was interrupted). Nothing was imported."
[[ "$(cat "$work/err")" == "$expected" ]] || { printf 'cut import said:\n%s\nexpected:\n%s\n' "$(cat "$work/err")" "$expected"; exit 1; }
[[ ! -s "$work/out" && ! -e "$work/fresh-store/points.jsonl" ]] || { echo "a cut file imported something"; exit 1; }
mkdir -p "$work/cut-store"
cp "$work/cut.jsonl" "$work/cut-store/points.jsonl"
if "$bench" validate --store "$work/cut-store" >"$work/out" 2>"$work/err"; then echo "a cut store passed validate"; exit 1; fi
grep -qF "points.jsonl:$line: the last line is incomplete: the file is cut $into bytes into it, at byte 500, with no newline (a write was interrupted); the next append moves it to a file beside the store" "$work/err"

# A whole last point without its final newline (an editor dropped it) is
# no cut line: validate says so and passes, export reads it, and the next
# import completes it with the newline and keeps it.
mkdir -p "$work/unterminated"
head -n 2 "$fixture" >"$work/unterminated/points.jsonl"
truncate -s -1 "$work/unterminated/points.jsonl"
"$bench" validate --store "$work/unterminated" >"$work/out" 2>"$work/err" ||
  { echo "validate failed a whole point without its newline"; cat "$work/err"; exit 1; }
grep -q "2 valid point(s), 0 bad line(s)" "$work/out" || { cat "$work/out"; exit 1; }
[[ "$(cat "$work/err")" == "$work/unterminated/points.jsonl:2: the last line lacks its newline; its point is whole and kept (the next append completes it with the newline)" ]] ||
  { echo "validate said:"; cat "$work/err"; exit 1; }
"$bench" export --store "$work/unterminated" --format csv >"$work/csv" 2>"$work/err" || { cat "$work/err"; exit 1; }
[[ $(wc -l <"$work/csv") -eq 3 ]] || { echo "export did not read both points"; cat "$work/csv"; exit 1; }
"$bench" import --store "$work/unterminated" "$fixture" >"$work/out" 2>"$work/err" || { cat "$work/err"; exit 1; }
grep -q "its last line lacked its newline; its point is whole and kept: the newline was appended" "$work/err" ||
  { cat "$work/err"; exit 1; }
cmp <(head -n 2 "$fixture") <(head -n 2 "$work/unterminated/points.jsonl") || { echo "the two points changed"; exit 1; }
! ls "$work/unterminated" | grep -q torn || { echo "a whole point was moved aside"; exit 1; }
"$bench" validate --store "$work/unterminated" 2>&1 | grep -q "4 valid point(s), 0 bad line(s), 0 duplicate(s)$" ||
  { "$bench" validate --store "$work/unterminated"; exit 1; }

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

# Points no measurement can give: every command that reads a store (validate,
# import, export, check, render) refuses each line, in one line that names the
# file, the line and the field; import and export take nothing, validate fails.
good='{"schema":2,"scenario":"churn-4t","commit":"3333333333333333333333333333333333333333","measured_at":"2025-06-01T10:00:00Z","overhead":1.68,"interval":[1.55,1.81],"runs":1,"median_with_s":2.68,"median_without_s":1.0,"raw":{"with":[{"wall_s":2.68}],"without":[{"wall_s":1.0}]}}'
mkdir -p "$work/hostile"
echo "$good" >"$work/hostile/points.jsonl"
reasons=()
while IFS='|' read -r from to reason; do
  hostile=${good/"$from"/"$to"}
  [[ "$hostile" != "$good" ]] || { echo "the case $reason changes nothing"; exit 1; }
  echo "$hostile" >>"$work/hostile/points.jsonl"
  reasons+=("$reason")
done <<'CASES'
"overhead":1.68,"interval":[1.55,1.81]|"overhead":-5,"interval":[-6,-4]|field "overhead" must be above -1
"overhead":1.68|"overhead":1e300|field "overhead" must be at most 1e+06
"overhead":1.68|"overhead":3|field "overhead" 3 is outside its own interval [1.55, 1.81]
[1.55,1.81]|[1.81,1.55]|field "interval" is inverted
"median_with_s":2.68|"median_with_s":-2.68|field "median_with_s" must be above 0 seconds, got -2.68
"median_without_s":1.0|"median_without_s":0|field "median_without_s" must be above 0 seconds, got 0
"runs":1|"runs":4|field "runs" is 4 but raw holds 1 run(s) with the library and 1 without
{"wall_s":1.0}|{"wall_s":-1.0}|field "raw.without[0].wall_s" must be above 0 seconds
"commit":"3333333333333333333333333333333333333333"|"commit":"zz"|field "commit" must be a commit's SHA
"scenario":"churn-4t"|"scenario":"../../x"|field "scenario" must be a scenario's name
"scenario":"churn-4t"|"scenario":""|field "scenario" must be a scenario's name
"measured_at":"2025-06-01T10:00:00Z"|"measured_at":"2099-06-01T10:00:00Z"|field "measured_at" is in the future
"schema":2|"schema":2,"machine":{"fingerprint":"","cores":-2}|field "machine.cores" must be from 0
"schema":2|"schema":2,"machine":{"fingerprint":""}|field "machine.fingerprint" is empty
CASES
expect_each_refused() {
  local command=$1 i
  for i in "${!reasons[@]}"; do
    grep -qF "points.jsonl:$((i + 2)): ${reasons[$i]}" "$work/err" ||
      { echo "$command: no 'points.jsonl:$((i + 2)): ${reasons[$i]}'"; cat "$work/err"; exit 1; }
  done
}
for command in validate export check render import; do
  status=0
  case $command in
    validate) "$bench" validate --store "$work/hostile" >/dev/null 2>"$work/err" || status=$? ;;
    export) "$bench" export --store "$work/hostile" --format csv >"$work/out" 2>"$work/err" || status=$? ;;
    check) "$bench" check --store "$work/hostile" >/dev/null 2>"$work/err" || status=$? ;;
    render) "$bench" render --store "$work/hostile" --out "$work/gen-hostile" --no-plots >/dev/null 2>"$work/err" || status=$? ;;
    import) "$bench" import --store "$work/into" "$work/hostile/points.jsonl" >/dev/null 2>"$work/err" || status=$? ;;
  esac
  case $command in
    # export refuses at its first bad line, naming it.
    export) grep -qF "points.jsonl:2: ${reasons[0]}" "$work/err" || { cat "$work/err"; exit 1; } ;;
    *) expect_each_refused "$command" ;;
  esac
  if [[ $command == validate || $command == export || $command == import ]]; then
    [[ $status -ne 0 ]] || { echo "$command took points no measurement can give"; exit 1; }
  fi
done
grep -q "Nothing was imported" "$work/err"
[[ ! -e "$work/into/points.jsonl" ]]
[[ ! -s "$work/out" ]] || { echo "export wrote something"; exit 1; }

# A commit or a range that is not SHAs is refused before anything runs.
for option in "--commit main" "--commit zz" "--commit-range zz..yy" "--commit-range 3333333..HEAD"; do
  status=0
  # shellcheck disable=SC2086 # the option and its value, two words
  "$bench" suite --store "$work/never" $option 2>"$work/err" >/dev/null || status=$?
  [[ $status -eq 2 ]] || { echo "suite $option: status $status"; cat "$work/err"; exit 1; }
  grep -q "must be .*SHA" "$work/err" || { cat "$work/err"; exit 1; }
  [[ ! -e "$work/never" ]]
done
echo "hostile points from the command line: ok"

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
