#!/usr/bin/env bash
# Mutation check: do the tests fail when the product breaks?
#
#   tools/mutants.sh [NAME_REGEX]
#
# Applies each one-line bug of tools/mutants.list (or those whose name
# matches NAME_REGEX), one at a time, to a scratch git worktree of the
# current checkout (HEAD plus uncommitted changes to tracked files), rebuilds
# it incrementally and runs the tests the list names for it. Prints per bug:
#   killed          a test failed: the bug would be caught
#   survived        every test passed: a hole in the tests
#   not-applicable  the bug does not compile (or no test matched its regex)
#   stale           its original text is not in the file exactly once: the
#                   code moved, update the list
# then the kill rate, killed / (killed + survived). Exits 1 when a bug
# survived or the list is stale. It takes minutes (a rebuild per bug), so it
# is not part of tools/test.sh: run it after changing tests or the code the
# list covers, and keep the list current.
#
# The scratch worktree and its build live in $HEAPLINE_MUTANTS_DIR (default
# ${TMPDIR:-/tmp}/heapline-mutants-<user>) and are reused by the next run.
set -euo pipefail
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
list=${HEAPLINE_MUTANTS_LIST:-$source_dir/tools/mutants.list}
scratch=${HEAPLINE_MUTANTS_DIR:-${TMPDIR:-/tmp}/heapline-mutants-$(id -un)}
only=${1:-}
jobs=$(nproc)

# The checkout as it is now, uncommitted edits of tracked files included.
snapshot=$(git -C "$source_dir" stash create)
snapshot=${snapshot:-$(git -C "$source_dir" rev-parse HEAD)}
if [[ -e "$scratch/.git" ]]; then
  git -C "$scratch" checkout --quiet --force --detach "$snapshot"
  git -C "$scratch" clean --quiet -fdx --exclude=/build
else
  # --force: a scratch directory deleted by hand is still registered.
  git -C "$source_dir" worktree add --force --quiet --detach "$scratch" "$snapshot"
fi
build=$scratch/build

# One line per bug, tab-separated: NAME FILE ORIGINAL REPLACEMENT TEST_REGEX
# ('#' starts a comment line). Prints the fields NUL-separated.
read_list() {
  python3 - "$list" "$only" <<'EOF'
import re, sys
path, only = sys.argv[1], sys.argv[2]
for number, line in enumerate(open(path, encoding="utf-8"), 1):
    line = line.rstrip("\n")
    if not line.strip() or line.lstrip().startswith("#"):
        continue
    fields = line.split("\t")
    if len(fields) != 5 or not all(fields[i] for i in (0, 1, 2, 4)):
        sys.exit(f"{path}:{number}: expected NAME<TAB>FILE<TAB>ORIGINAL<TAB>REPLACEMENT<TAB>TEST_REGEX")
    if only and not re.search(only, fields[0]):
        continue
    sys.stdout.write("\0".join(fields) + "\0")
EOF
}

# Replaces ORIGINAL by REPLACEMENT in FILE when it occurs exactly once.
mutate() {
  python3 - "$@" <<'EOF'
import sys
path, original, replacement = sys.argv[1:4]
try:
    text = open(path, encoding="utf-8").read()
except FileNotFoundError:
    sys.exit(3)
if text.count(original) != 1:
    sys.exit(3)
open(path, "w", encoding="utf-8").write(text.replace(original, replacement))
EOF
}

mapfile -d '' fields < <(read_list)
(( ${#fields[@]} > 0 )) || { echo "mutants: no bug in $list matches '$only'" >&2; exit 2; }

echo "mutants: building $snapshot in $scratch"
[[ -f "$build/CMakeCache.txt" ]] || cmake -S "$scratch" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --parallel "$jobs" >"$scratch/build.log" 2>&1 || {
  echo "mutants: the unmutated tree does not build, see $scratch/build.log" >&2
  exit 2
}
# Every named test must pass before any bug is applied, or a kill means nothing.
regexes=()
for ((i = 0; i < ${#fields[@]}; i += 5)); do regexes+=("${fields[i + 4]}"); done
union=$(IFS='|'; echo "${regexes[*]}")
if ! ctest --test-dir "$build" --parallel "$jobs" --timeout 300 -R "$union" >"$scratch/baseline.log" 2>&1; then
  echo "mutants: the tests fail without any bug, see $scratch/baseline.log" >&2
  exit 2
fi

killed=0 survived=0 skipped=0 stale=0
started=$SECONDS
for ((i = 0; i < ${#fields[@]}; i += 5)); do
  name=${fields[i]} file=${fields[i + 1]} original=${fields[i + 2]} replacement=${fields[i + 3]} tests=${fields[i + 4]}
  if ! mutate "$scratch/$file" "$original" "$replacement"; then
    verdict=stale
    stale=$((stale + 1))
  elif ! cmake --build "$build" --parallel "$jobs" >"$scratch/mutant.log" 2>&1; then
    verdict=not-applicable
    skipped=$((skipped + 1))
  else
    status=0
    ctest --test-dir "$build" --parallel "$jobs" --timeout 300 --no-tests=error -R "$tests" \
      >"$scratch/mutant.log" 2>&1 || status=$?
    if grep -q "No tests were found" "$scratch/mutant.log"; then
      verdict=not-applicable
      skipped=$((skipped + 1))
    elif ((status != 0)); then
      verdict=killed
      killed=$((killed + 1))
    else
      verdict=survived
      survived=$((survived + 1))
    fi
  fi
  git -C "$scratch" checkout --quiet -- "$file" 2>/dev/null || true
  if [[ $verdict == killed ]]; then
    failed=$(grep -oE '[0-9]+ - [^ ]+ \(' "$scratch/mutant.log" | head -n 3 | sed -E 's/^[0-9]+ - //; s/ \($//' | paste -sd, -)
    printf '%-15s %s  (%s)\n' "$verdict" "$name" "$failed"
  else
    printf '%-15s %s\n' "$verdict" "$name"
  fi
done
# Leave the build matching the tree, for the next run.
cmake --build "$build" --parallel "$jobs" >"$scratch/build.log" 2>&1 || true

judged=$((killed + survived))
echo "mutants: $killed killed, $survived survived, $skipped not applicable, $stale stale," \
  "in $((SECONDS - started)) s"
if ((judged > 0)); then
  echo "mutants: kill rate $((100 * killed / judged))% ($killed/$judged)"
fi
((survived == 0 && stale == 0))
