#!/usr/bin/env bash
# json_readers_test.sh HEAPLINE_BENCH HEAPLINE SOURCE_DIR
# Every JSON file the programs read (heapline-bench: a scenario catalogue, a
# store's points and calibration, the release comparison render takes;
# heapline: a heapline/1 report) is read by one rule (heapline/json_document.h
# and its words in the store's reader): empty, only white space, cut short,
# a syntax error, a number beyond any double and the wrong top-level type
# each give one line that names the file and says what is wrong, never the
# JSON library's own text ("[json.exception...", "parse error at line",
# simdjson's "TAPE_ERROR"), and the program stops or skips the file as it
# says.
set -uo pipefail
bench=$1 heapline=$2 source_dir=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# name|content|what the line says (a grep -E pattern)
contents=(
  "empty||empty"
  "blank|   |only white space"
  "cut|{\"scenarios\": [1, |cut short"
  "syntax|{\"scenarios\" 1}|a syntax error"
  "number|{\"x\": 1e999}|a number beyond"
  "array|[1, 2]|an array at the top level"
)
# A line of a JSON Lines file cannot be empty or only white space: those
# are skipped as blank lines.
line_contents=("${contents[@]:2}")

# check WHAT FILE PATTERN STATUS -- COMMAND...: one line on stderr (or the
# line that names FILE among the program's lines, for a warning), naming
# FILE, saying PATTERN, with no JSON library's text.
check() {
  local what=$1 file=$2 pattern=$3 status=$4
  shift 5
  "$@" >out 2>err </dev/null
  local code=$?
  [[ $status == any || $code == "$status" ]] || fail "$what: exit $code, expected $status: $(cat err)"
  local said
  said=$(grep -F -- "$file" err)
  [[ -n $said ]] || { fail "$what: no line names $file: $(cat err)"; return; }
  [[ $(grep -cF -- "$file" err) == 1 ]] || fail "$what: more than one line names $file: $(cat err)"
  grep -qE -- "$pattern" <<<"$said" || fail "$what: does not say '$pattern': $said"
  if grep -qE 'json\.exception|parse error at line|parse_error|type_error|TAPE_ERROR|_ERROR:|simdjson' err; then
    fail "$what: the JSON library's own text: $(cat err)"
  fi
}

mkdir -p store docs page
: >store/points.jsonl
for entry in "${contents[@]}"; do
  IFS='|' read -r name content pattern <<<"$entry"
  printf '%s' "$content" >"catalogue-$name.json"
  check "catalogue $name" "catalogue-$name.json" "$pattern" 1 -- \
    "$bench" --catalogue "catalogue-$name.json" overhead churn-1t none 1
  printf '%s' "$content" >"report-$name.json"
  check "report $name" "report-$name.json" "$pattern" 1 -- "$heapline" profile "report-$name.json"
  # render reads <source>/docs/release-comparison.json.
  printf '%s' "$content" >docs/release-comparison.json
  check "release comparison $name" "release-comparison.json" "$pattern" 1 -- \
    "$bench" --source-dir "$work" --catalogue "$source_dir/scenarios/scenarios.json" render --store store --out page
done
for entry in "${line_contents[@]}"; do
  IFS='|' read -r name content pattern <<<"$entry"
  # The store's reader has its own words for a number: one beyond any field.
  [[ $name == number ]] && pattern="a number beyond any field's range"
  [[ $name == array || $name == syntax ]] && pattern="not valid JSON|must be"
  printf '%s\n' "$content" >store/points.jsonl
  check "points $name" "points.jsonl:1" "$pattern" 1 -- "$bench" validate --store store
  : >store/points.jsonl
  printf '%s\n' "$content" >store/calibration.jsonl
  IFS='|' read -r _ _ pattern <<<"$entry"
  check "calibration $name" "calibration.jsonl:1" "$pattern" any -- "$bench" check --store store
  # validate checks the calibration too: it is part of the store.
  check "calibration $name, validate" "calibration.jsonl:1" "$pattern" 1 -- "$bench" validate --store store
  rm -f store/calibration.jsonl
done
# A field of the wrong type is named, in the project's words.
printf '{"scenarios": [{"name": "s1", "command": "malloc_churn 1 1000"}]}' >catalogue-field.json
check "catalogue field" "catalogue-field.json" 'field "command" must be an array of strings, got a string' 1 -- \
  "$bench" --catalogue catalogue-field.json overhead s1 none 1
printf '{"scenario": "churn-1t", "fingerprint": 5, "sigma": 0.01}\n' >store/calibration.jsonl
check "calibration field" "calibration.jsonl:1" 'field "fingerprint" must be a string, got a whole number' any -- \
  "$bench" check --store store
rm -f store/calibration.jsonl

if ((failures > 0)); then
  echo "json readers: $failures failure(s)"
  exit 1
fi
echo "json readers: ok"
