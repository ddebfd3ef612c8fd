#!/usr/bin/env bash
# readme_examples_test.sh SOURCE_DIR BENCH: what the README and the docs say
# holds in this repository.
#  - every `tools/compare_releases.sh REF REF...` example names refs that
#    exist here (an example naming tags the repository does not have fails
#    for every reader who copies it);
#  - the version the README states is the one CMake builds, which
#    heapline-bench reports and records in every point;
#  - docs/release-comparison.json names no path of the machine that measured
#    it;
#  - nothing cites DESIGN.md, a file outside the repository.
set -euo pipefail
source_dir=$1 bench=$2
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

cmake_version=$(sed -nE '/^project\(heapline/,/\)/s/^[[:space:]]*VERSION[[:space:]]+([0-9]+\.[0-9]+\.[0-9]+).*/\1/p' \
  "$source_dir/CMakeLists.txt")
[[ -n "$cmake_version" ]] || fail "no VERSION in the project() of CMakeLists.txt"
bench_version=$("$bench" --version)
[[ "$bench_version" == *"$cmake_version"* ]] || fail "heapline-bench --version says '$bench_version', CMake $cmake_version"
grep -q "This is heapline $cmake_version," "$source_dir/README.md" ||
  fail "README.md does not say 'This is heapline $cmake_version,'"

/usr/bin/python3 - "$source_dir/docs/release-comparison.json" <<'PY'
import json, sys
def strings(value):
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for v in value.values():
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)
# /dev/null (where a peer's trace is sent) is every machine's, not this one's.
paths = [s for s in strings(json.load(open(sys.argv[1], encoding="utf-8")))
         if s.startswith(("/", "~")) and s != "/dev/null"]
if paths:
    sys.exit(f"FAIL: {sys.argv[1]} names paths of the machine that measured it: {paths}")
PY

# Code and docs cite the project's own design document (docs/design.md),
# never a file outside the repository.
if cited=$(grep -rnI --exclude-dir=build --exclude-dir=.git --exclude-dir=node_modules --exclude-dir=_build \
  -e 'DESIGN\.md' "$source_dir" | grep -v '^[^:]*/tests/docs/readme_examples_test\.sh:'); then
  fail "files cite DESIGN.md, which is not in the repository:"$'\n'"$cited"
fi

# The refs of the examples. A clone without history (actions/checkout's
# default depth) cannot resolve older commits: skip that part there.
examples=$(grep -hoE 'tools/compare_releases\.sh( +[^ -][^ ]*)+' "$source_dir/README.md" "$source_dir"/docs/*.md |
  grep -v 'REF_' || true)
[[ -n "$examples" ]] || fail "README.md has no tools/compare_releases.sh example"
if ! git -C "$source_dir" rev-parse --git-dir >/dev/null 2>&1 ||
  [[ "$(git -C "$source_dir" rev-parse --is-shallow-repository)" == true ]]; then
  echo "readme examples: not a full git clone, refs not checked"
  exit 77
fi
while read -r _ refs; do
  for ref in $refs; do
    git -C "$source_dir" rev-parse --verify --quiet "$ref^{commit}" >/dev/null ||
      fail "the example 'tools/compare_releases.sh $refs' names '$ref', which is not a commit of this repository"
  done
done <<<"$examples"
echo "readme examples: ok"
