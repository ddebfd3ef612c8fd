#!/usr/bin/env bash
# command_line_test.sh BENCH CASE: what heapline-bench's --help says of an
# option, from the command line, one case per test:
#  - bin_dir: --bin-dir names where the scenario program and the libraries
#    are (an empty directory: the program is not found there, and said so);
#  - default_store: without --store, the store is <source>/bench-data;
#  - accuracy_json: accuracy --json prints the run's figures as one object;
#  - overhead_instructions: overhead --instructions also counts the
#    catalogue's reduced command under callgrind, into the point;
#  - help_all: --help-all prints heapline-bench's help and every
#    subcommand's options, also when given after a subcommand.
set -euo pipefail
bench=$1 case=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }
bin_dir=$(dirname "$bench")

case $case in
  bin_dir)
    mkdir -p "$work/empty" "$work/bin"
    status=0
    "$bench" --bin-dir "$work/empty" overhead churn-1t none 1 --scale 0.001 --json >"$work/out" 2>"$work/err" || status=$?
    [[ $status -eq 1 ]] || fail "an empty --bin-dir exited $status: $(cat "$work/err")"
    grep -qF "command not found or not executable: $work/empty/malloc_churn" "$work/err" ||
      fail "the refusal does not name the program in --bin-dir: $(cat "$work/err")"
    cp "$bin_dir/malloc_churn" "$work/bin/"
    "$bench" --bin-dir "$work/bin" overhead churn-1t none 1 --scale 0.001 --json >"$work/point.json" 2>"$work/err" ||
      fail "the program in --bin-dir did not run: $(cat "$work/err")"
    grep -q '"command": "malloc_churn 1 ' "$work/point.json" || fail "no point: $(cat "$work/point.json")"
    ;;
  help_all)
    for words in "--help-all" "suite --help-all" "export --help-all"; do
      # shellcheck disable=SC2086 # the words are split on purpose
      "$bench" $words >"$work/out" 2>"$work/err" || fail "$words exited non-zero: $(cat "$work/err")"
      # An option of the first subcommand and one of the last: every
      # subcommand's options are there, whichever one was named.
      grep -qF -- "--instructions" "$work/out" || fail "$words: no overhead --instructions: $(cat "$work/out")"
      grep -qF -- "--format" "$work/out" || fail "$words: no export --format: $(cat "$work/out")"
      grep -qF "heapline-bench: the overhead-regression service" "$work/out" || fail "$words: not heapline-bench's help"
    done
    ;;
  default_store)
    mkdir -p "$work/source"
    status=0
    "$bench" --source-dir "$work/source" validate >"$work/out" 2>"$work/err" || status=$?
    [[ $status -eq 1 ]] || fail "validate without a store exited $status"
    grep -qF "no store directory at $work/source/bench-data" "$work/err" || fail "not <source>/bench-data: $(cat "$work/err")"
    mkdir -p "$work/source/bench-data"
    "$bench" --source-dir "$work/source" validate >"$work/out" 2>&1 || fail "validate of an empty store: $(cat "$work/out")"
    grep -qF "$work/source/bench-data/points.jsonl: 0 valid point(s)" "$work/out" || fail "$(cat "$work/out")"
    ;;
  accuracy_json)
    "$bench" accuracy --json -- "$bin_dir/malloc_churn" 1 2000 >"$work/figures.json" 2>"$work/err" ||
      fail "accuracy --json: $(cat "$work/err")"
    /usr/bin/python3 - "$work/figures.json" <<'PY'
import json, sys
figures = json.load(open(sys.argv[1]))
for key in ("library", "batched_peak_bytes", "exact_peak_bytes", "error_bytes"):
    assert key in figures, f"no {key} in {figures}"
assert figures["library"].endswith("libheapline_accuracy.so"), figures
assert figures["exact_peak_bytes"] > 0 and figures["batched_peak_bytes"] > 0, figures
assert figures["error_bytes"] == figures["batched_peak_bytes"] - figures["exact_peak_bytes"], figures
PY
    ;;
  overhead_instructions)
    command -v valgrind >/dev/null || { echo "no valgrind: the case needs it (tools/setup.sh installs it)"; exit 77; }
    "$bench" overhead churn-1t "$bin_dir/libheapline.so" 1 --scale 0.001 --instructions --json >"$work/point.json" \
      2>"$work/err" || fail "overhead --instructions: $(cat "$work/err")"
    /usr/bin/python3 - "$work/point.json" <<'PY'
import json, sys
point = json.load(open(sys.argv[1]))
counted = point.get("instructions")
assert isinstance(counted, dict), f"no instruction count in the point: {counted}"
assert counted["without"] > 0 and counted["with"] > counted["without"], counted
assert counted["command"].startswith("malloc_churn "), counted
PY
    ;;
  *) fail "no case $case" ;;
esac
echo "command line ($case): ok"
