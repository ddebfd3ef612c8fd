#!/usr/bin/env bash
# tools/test.sh reaches ctest each way, with the sanitizer build's skip list
# as one -E (none when the list has no entry), and a step that fails says
# which, as in every script of tools/. Run on a copy of the script beside stand-in steps and a stand-in
# ctest that records how it was called.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "test_script_test: $*" >&2; exit 1; }

mkdir -p "$work/tree/tools" "$work/tree/build/sanitize" "$work/tree/build/release" "$work/bin"
cp "$source_dir/tools/test.sh" "$work/tree/tools/test.sh"
touch "$work/tree/build/sanitize/CMakeCache.txt" "$work/tree/build/release/CMakeCache.txt"
printf '#!/bin/sh\nexit 0\n' >"$work/tree/tools/setup.sh"
printf '#!/bin/sh\nexit 0\n' >"$work/tree/tools/build.sh"
cat >"$work/bin/ctest" <<STUB
#!/bin/sh
{ printf '%s\n' "\$@"; echo "ASAN_OPTIONS=\${ASAN_OPTIONS:-}"; } >"$work/ctest.args"
STUB
chmod +x "$work/tree/tools/"*.sh "$work/bin/ctest"
run() { rm -f "$work/ctest.args"; env -u ASAN_OPTIONS -u UBSAN_OPTIONS -u HEAPLINE_BUILD_DIR PATH="$work/bin:$PATH" "$work/tree/tools/test.sh" "$@"; }

# A skip list of comments only: every test runs, under the sanitizers' options.
printf '# comment\n#   REGEX<TAB>why\n\n' >"$work/tree/tools/sanitize.skip"
run --sanitize -R Foo >"$work/out" 2>&1 || fail "an empty skip list ended the run: $(cat "$work/out")"
[[ -f "$work/ctest.args" ]] || fail "ctest did not run: $(cat "$work/out")"
grep -qx -- "$work/tree/build/sanitize" "$work/ctest.args" || fail "not the sanitizer build: $(cat "$work/ctest.args")"
! grep -qx -- "-E" "$work/ctest.args" || fail "nothing to skip, yet an -E: $(cat "$work/ctest.args")"
grep -qx -- "Foo" "$work/ctest.args" || fail "the caller's arguments are lost: $(cat "$work/ctest.args")"
grep -q "^ASAN_OPTIONS=.*detect_leaks=1" "$work/ctest.args" || fail "leaks are not errors: $(cat "$work/ctest.args")"
grep -q "lists: none" "$work/out" || fail "the skip list is not said: $(cat "$work/out")"

# Two entries: one -E with both, the reasons left out.
printf '# comment\nfirst\\.test\tno ptrace\nsecond\tno room\n' >"$work/tree/tools/sanitize.skip"
run --sanitize >"$work/out" 2>&1 || fail "a skip list ended the run: $(cat "$work/out")"
[[ "$(grep -x -A1 -- "-E" "$work/ctest.args" | tail -n 1)" == 'first\.test|second' ]] ||
  fail "the skip list is not one -E: $(cat "$work/ctest.args")"

# The plain build: the release tree, nothing skipped.
run >"$work/out" 2>&1 || fail "the plain run failed: $(cat "$work/out")"
grep -qx -- "$work/tree/build/release" "$work/ctest.args" || fail "not the release build: $(cat "$work/ctest.args")"
! grep -qx -- "-E" "$work/ctest.args" || fail "the plain run skips: $(cat "$work/ctest.args")"

# A step that fails: the run ends without ctest, and says which step.
printf '#!/bin/sh\nexit 3\n' >"$work/tree/tools/build.sh"
if run --sanitize >"$work/out" 2>&1; then fail "a failed build went on"; fi
[[ ! -f "$work/ctest.args" ]] || fail "ctest ran after a failed build"
grep -q "^test.sh: line [0-9]* failed (status 3): .*build.sh" "$work/out" || fail "the failed step is not said: $(cat "$work/out")"

# The class: every script of tools/ and CI's entry point says which step failed.
for script in "$source_dir"/tools/*.sh "$source_dir/.ci/run"; do
  grep -q '^trap .*LINENO failed.*ERR$' "$script" || fail "${script#"$source_dir"/} can end without saying which step failed (no ERR trap)"
done
echo "test_script_test: ok"
