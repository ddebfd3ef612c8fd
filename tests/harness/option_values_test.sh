#!/usr/bin/env bash
# option_values_test.sh BENCH
#
# Every value option of heapline-bench refuses nonsense (safety, class E):
# NaN, infinities, negative and out-of-range numbers, empty text, control
# characters. Each refusal is exit 2 and one line "OPTION: must be ..., got
# 'VALUE'" that is true of the value (never a C++ exception's text, never a
# value read as 0), and nothing runs: the store is not created.
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
mkdir -p "$work/store"

# refused "EXPECTED MESSAGE" ARGS...
refused() {
  local expected=$1 status=0
  shift
  "$bench" "$@" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -eq 2 ]] || fail "heapline-bench $* exited $status: $(cat "$work/err")"
  grep -qF -- "$expected" "$work/err" || fail "heapline-bench $*: '$expected' not in: $(cat "$work/err")"
  ! grep -qiE 'normal_quantile|stod|not in range 0\.000000|terminate|what\(\)' "$work/err" ||
    fail "heapline-bench $*: an internal message: $(cat "$work/err")"
  [[ ! -e "$work/fresh" ]] || fail "heapline-bench $* created a store before refusing"
}

# The repros of the safety issue.
refused "--rows: must be a whole number from 1 to 100000, got '0'" render --store "$work/store" --rows 0
refused "--false-alarm-rate: must be a number from 1e-06 to 0.5, got '1e-300'" check --store "$work/store" --false-alarm-rate 1e-300
refused "--min-effect: must be a number from 0 to 100, got ''" check --store "$work/store" --min-effect ''

# Every numeric option, with every kind of nonsense.
whole_numbers=(
  "render --store $work/store --rows"
  "suite --store $work/fresh --runs" "suite --store $work/fresh --max-runs"
  "check --store $work/store --window" "check --store $work/store --min-history"
  "compare --rounds" "compare --runs" "calibrate --store $work/fresh --runs" "calibrate --store $work/fresh --repeats"
)
for option in "${whole_numbers[@]}"; do
  read -r -a words <<<"$option"
  for value in 0 -1 '' nan 1.5 ten 99999999999999999999; do
    refused "${words[-1]}: must be a whole number from" "${words[@]}" "$value"
  done
done
numbers=(
  "suite --store $work/fresh --scale" "suite --store $work/fresh --until-ci" "compare --scale" "calibrate --store $work/fresh --scale"
  "check --store $work/store --false-alarm-rate" "check --store $work/store --min-effect"
  "check --store $work/store --min-effect-instructions" "calibrate --store $work/fresh --min-effect"
)
for option in "${numbers[@]}"; do
  read -r -a words <<<"$option"
  for value in nan inf -inf -1 '' 1e400 1e9 x 0x; do
    refused "${words[-1]}: must be a number" "${words[@]}" "$value"
  done
done
# Text options: never empty, never a control character.
texts=(
  "suite --store" "suite --store $work/fresh --lib" "suite --store $work/fresh --only"
  "render --out" "export --out" "import --store" "compare --build" "compare --env" "compare --json"
)
for option in "${texts[@]}"; do
  read -r -a words <<<"$option"
  refused "${words[-1]}: must not be empty" "${words[@]}" ''
  refused "${words[-1]}: must not hold a control character" "${words[@]}" $'a\nb'
done
refused "--max-runs: must be at least the runs asked for (10), got '5'" suite --store "$work/fresh" --until-ci 1 --max-runs 5
refused "--max-runs: must be at least the runs asked for (8), got '7'" overhead churn-1t none 8 --until-ci 1 --max-runs 7
refused "--min-history (50) must be at most --window (20)" check --store "$work/store" --min-history 50
refused "--min-history (9) must be at most --window (8)" calibrate --store "$work/fresh" --window 8 --min-history 9
# Commits: a SHA, whatever else the text is (a point names its commit so).
for value in '' $'a\nb' 'a b' main HEAD~1 zz 123456 ABCDEF0 "$(printf 'a%.0s' {1..65})"; do
  refused "--commit: must be a commit's SHA (7 to 64 lowercase hexadecimal digits)" suite --store "$work/fresh" --commit "$value"
  refused "--commit: must be a commit's SHA (7 to 64 lowercase hexadecimal digits)" export --commit "$value"
  refused "--commit-range: must be FIRST..LAST, two commits' SHAs" suite --store "$work/fresh" --commit-range "$value..abcdef0"
done
refused "--until-ci-of: must be wall or cpu, got 'x'" suite --store "$work/fresh" --until-ci-of x
refused "--gate: must name wall, cpu or instructions, got 'speed'" check --store "$work/store" --gate speed
refused "--source-dir: no such directory: " --source-dir "$work/missing" validate --store "$work/store"
echo "option values: ok"
