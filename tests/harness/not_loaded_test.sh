#!/usr/bin/env bash
# not_loaded_test.sh BENCH LIBRARY STATIC_PROGRAM PATH_NAME
#
# Every heapline-bench path that runs a command under the library and
# expects it loaded says why it was not, in the same line, made by one
# function (measurement.h, library_not_loaded): overhead, accuracy, suite,
# compare, calibrate and instructions, on a statically linked program where
# nothing can be preloaded. accuracy said only that its report file was
# missing ("the accuracy run of ./st under ...: /tmp/heapline-bench-XXXX/
# accuracy.json: No such file or directory").
set -euo pipefail
bench=$1 library=$2 static=$3 path=$4
work=$(mktemp -d "${TMPDIR:-/tmp}/heapline-not-loaded.XXXXXX")
trap 'rm -rf "$work"' EXIT
mkdir "$work/store"
cat >"$work/catalogue.json" <<JSON
{"scenarios": [{"name": "static", "command": ["$static"], "instructions_command": ["$static"]}]}
JSON
accuracy_library=$(dirname "$library")/libheapline_accuracy.so
catalogue=(--catalogue "$work/catalogue.json")
case $path in
  overhead) run=("$bench" "${catalogue[@]}" overhead static "$library" 1 -- "$static") ;;
  accuracy) run=("$bench" accuracy --lib "$library" -- "$static"); library=$accuracy_library ;;
  suite) run=("$bench" "${catalogue[@]}" suite --store "$work/store" --out "$work/gen" --runs 1 --no-instructions
              --no-plots --commit 0123456789abcdef0123456789abcdef01234567) ;;
  compare) run=("$bench" "${catalogue[@]}" compare --build "a=$library" --build "b=$library" --runs 1 --rounds 1
                --no-instructions --out "$work/compare") ;;
  calibrate) run=("$bench" "${catalogue[@]}" calibrate --store "$work/store" --lib "$library" --runs 1 --repeats 3
                  --no-instructions) ;;
  instructions)
    command -v valgrind >/dev/null || { echo "valgrind is not installed"; exit 77; }
    run=("$bench" "${catalogue[@]}" instructions --lib "$library") ;;
  *) echo "no path $path"; exit 2 ;;
esac
status=0
"${run[@]}" >"$work/out" 2>"$work/err" </dev/null || status=$?
[[ $status -ne 0 ]] || { echo "$path: exit 0 on a program the library cannot be loaded into"; cat "$work/err"; exit 1; }
line="$library was not loaded into $static: $static: statically linked: no loader runs, so nothing can be preloaded"
grep -qF -- "$line" "$work/err" || { echo "$path: no line '$line'"; cat "$work/out" "$work/err"; exit 1; }
echo "$path: $(grep -F -- "$line" "$work/err")"
