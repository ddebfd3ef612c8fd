#!/usr/bin/env bash
# shellcheck disable=SC2016 # the backquotes in the patterns are Markdown, not shell
# slow_shim_check.sh: does the service catch a small slowdown on this machine?
# Measures NORMAL points of churn-1t and churn-4t with libheapline.so, then
# one point with the deliberately slower build in front of it
# (libheapline_slow_shim.so: about 50 instructions more per call), all into
# a fresh store, and prints `heapline-bench check`'s verdicts after each
# normal point from the 9th on (none should be a regression) and on the slow
# point (a regression of the instructions of churn-1t and churn-4t and of
# the CPU time of churn-4t is what docs/regressions.md expects). The rule is
# the workflow's: five scenarios, the instruction and cpu figures gated.
# Timed figures mean something only on a quiet machine: run it when nothing
# else runs. About 9 minutes on a quiet 2-core machine at full scale.
#
#   tools/slow_shim_check.sh [--normal N] [--scale S] [--keep DIR]
#
# Exit status: 0 when the normal points raised no gated alarm and the slow
# point was flagged on all three figures; 1 otherwise; 2 on a usage error.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source-path=SCRIPTDIR source=lib/library.sh
source "$source_dir/tools/lib/library.sh"
bin=${HEAPLINE_BUILD_DIR:-$source_dir/build/release}/bin
bench=$bin/heapline-bench
library=$(heapline_library "$bin")
normal=10
scale=1
keep=
while [[ $# -gt 0 ]]; do
  case $1 in
    --normal) normal=$2; shift 2 ;;
    --scale) scale=$2; shift 2 ;;
    --keep) keep=$2; shift 2 ;;
    *) echo "usage: $0 [--normal N] [--scale S] [--keep DIR]" >&2; exit 2 ;;
  esac
done
[[ $normal =~ ^[0-9]+$ && $normal -ge 8 ]] || { echo "slow_shim_check: --normal must be at least 8 (the verdicts' --min-history)" >&2; exit 2; }
for program in "$bench" "$library" "$bin/libheapline_slow_shim.so"; do
  [[ -e $program ]] || { echo "slow_shim_check: $program is missing: run tools/build.sh" >&2; exit 2; }
done

if [[ -n $keep ]]; then
  store=$keep
  mkdir -p "$store"
  [[ ! -s $store/points.jsonl ]] || { echo "slow_shim_check: $store already holds points" >&2; exit 2; }
else
  store=$(mktemp -d)
  trap 'rm -rf "$store"' EXIT
fi

measure() {  # LABEL LIBRARY
  "$bench" suite --store "$store" --out "$store/page" --no-plots --only churn-1t,churn-4t --scale "$scale" \
    --commit "$1" --lib "$2" >/dev/null 2>"$store/suite.log" || { cat "$store/suite.log" >&2; exit 1; }
  grep -E '^(churn-1t|churn-4t): ' "$store/suite.log" | sed "s/^/  $1 /"
}
verdict_rows() {  # REPORT -> the rows of check's verdict table, one per figure and scenario measured
  grep -E '^\| `churn-(1t|4t)` \|' <<<"$1"
}

false_alarms=0
started=$SECONDS
echo "normal points: $library, scale $scale"
for ((i = 1; i <= normal; i++)); do
  measure "normal-$i" "$library"
  if ((i >= 9)); then
    rows=$(verdict_rows "$("$bench" check --store "$store" 2>/dev/null)")
    alarms=$(grep -c '(gated) .* \*\*regression\*\*' <<<"$rows" || true)
    false_alarms=$((false_alarms + alarms))
    echo "  after normal-$i: $alarms gated regression(s)"
  fi
done

echo
echo "slow point: $bin/libheapline_slow_shim.so in front of libheapline.so"
measure slow "$bin/libheapline_slow_shim.so:$library"
echo
# check's own report, its verdict table as heapline-bench prints it.
report=$("$bench" check --store "$store" 2>/dev/null)
echo "$report"
rows=$(verdict_rows "$report")
echo
flagged=0
for expected in '`churn-1t` | instructions' '`churn-4t` | instructions' '`churn-4t` | cpu'; do
  if grep -F "| $expected (gated) |" <<<"$rows" | grep -q '\*\*regression\*\*'; then
    echo "flagged:     $expected"
    flagged=$((flagged + 1))
  else
    echo "NOT flagged: $expected"
  fi
done
echo "false alarms on the normal points: $false_alarms; slow point flagged on $flagged of 3 expected figures;" \
  "$((SECONDS - started)) s"
[[ $false_alarms -eq 0 && $flagged -eq 3 ]]
