#!/usr/bin/env bash
# no_shell_test.sh BENCH SOURCE_DIR
#
# No text reaches a shell (safety, class A). heapline-bench runs programs
# only with an argument vector (measurement/process_runner.h): its sources
# call no popen, system or exec* of their own and build no "sh -c" command,
# nor do the tools and CI scripts;
# and a source directory whose path holds quotes and a command substitution
# is one argument to git: the command in it never runs, and the point names
# the true commit. When git cannot name the commit, the suite says why in
# one line and measures nothing (it never records an empty commit).
set -euo pipefail
bench=$1 source_dir=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# 1. The sources: process_runner.cpp is the one place that starts a program.
found=$(grep -rnE '\b(popen|system|execl[pe]?|execv[pe]?|execvpe|posix_spawnp?)[[:space:]]*\(|"(/bin/)?(ba)?sh",[[:space:]]*"-c"' \
  "$source_dir/harness/src" "$source_dir/harness/include" | grep -v '^[^:]*/measurement/process_runner\.cpp:' || true)
[[ -z "$found" ]] || fail "a program started outside process_runner.cpp, or through a shell:"$'\n'"$found"

# 1b. The tools and CI scripts around it (tools/, bench/; the vendored
# linters aside): no eval, no "sh -c", no os.system, shell=True or popen,
# so a path, a ref or a line of the store is always one argument.
found=$(grep -rnE '(^|[^[:alnum:]_.-])eval[[:space:]]|(ba)?sh -c|os\.system|shell=True|popen[[:space:]]*\(' \
  "$source_dir/tools" "$source_dir/bench" | grep -v "^$source_dir/tools/ci/linters/" || true)
[[ -z "$found" ]] || fail "a tool hands text to a shell:"$'\n'"$found"

# 2. A checkout whose path would run a command if it reached a shell.
evil="$work/it's \$(touch $work/PWNED) \`touch $work/PWNED2\`; touch $work/PWNED3 '"
mkdir -p "$evil"
git -C "$evil" init --quiet
git -C "$evil" -c user.name=t -c user.email=t@example.invalid commit --quiet --allow-empty -m one
commit=$(git -C "$evil" rev-parse HEAD)
"$bench" --source-dir "$evil" overhead churn-1t none 1 --json -- true >"$work/point.json" 2>"$work/err" ||
  fail "overhead with a quoted source directory failed: $(cat "$work/err")"
[[ ! -e "$work/PWNED" && ! -e "$work/PWNED2" && ! -e "$work/PWNED3" ]] || fail "the source directory's text ran as a command"
grep -q "\"commit\": \"$commit\"" "$work/point.json" || fail "the point does not name $commit: $(grep commit "$work/point.json")"

# 3. Not a checkout: the suite refuses in one line, before measuring.
mkdir -p "$work/not-a-checkout"
status=0
mkdir -p "$work/store"
"$bench" --source-dir "$work/not-a-checkout" suite --store "$work/store" --lib "$(dirname "$bench")/libheapline_null.so" \
  --only churn-1t --runs 1 --scale 0.0005 \
  --no-instructions --no-plots >"$work/out" 2>"$work/err" || status=$?
[[ $status -eq 1 ]] || fail "suite outside a checkout exited $status: $(cat "$work/err")"
grep -q "cannot tell which commit $work/not-a-checkout holds: git rev-parse exited with status 128 (fatal: not a git repository" \
  "$work/err" || fail "the refusal does not say why: $(cat "$work/err")"
grep -q "Pass --commit COMMIT" "$work/err" || fail "the refusal does not say what to do: $(cat "$work/err")"
[[ ! -s "$work/store/points.jsonl" ]] || fail "a point was recorded without its commit"
# overhead prints its point anyway, and says it names no commit.
"$bench" --source-dir "$work/not-a-checkout" overhead churn-1t none 1 --json -- true >"$work/point.json" 2>"$work/err"
grep -q "note: cannot tell which commit" "$work/err" || fail "overhead did not say why the point names no commit"
echo "no shell: ok"
