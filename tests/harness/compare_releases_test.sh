#!/usr/bin/env bash
# compare_releases_test.sh SOURCE_DIR BUILD_DIR CASE
#
# tools/compare_releases.sh end to end on two commits of a throwaway clone of
# this repository, at a tiny scale (two_refs); a ref that does not exist and
# a ref that does not build, each refused clearly (refused_refs); and
# heapline-bench compare's own options: a missing library, one setting per
# build, heaptrack beside memusage (compare_options). One case per test:
# each of the first two builds libheapline.so from scratch (two_refs once:
# its two commits have the same tree).
set -euo pipefail
source_dir=$1 build_dir=$2 case_name=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export HEAPLINE_BUILD_DIR=$build_dir HEAPLINE_COMPARE_DIR=$work/compare HEAPLINE_COMPARE_REPO=$work/repo
bench=$build_dir/bin/heapline-bench
# Each cell: the figure and its interval; each after the first, its mark.
cell='[+-][0-9.]+% \[-?[0-9.]+, -?[0-9.]+\]'
marked="$cell (▲ slower|▼ faster|= same)"

clone_with_a_second_commit() {
  git clone -q "$source_dir" "$work/repo"
  git -C "$work/repo" -c user.name=test -c user.email=test@example.invalid \
    commit -q --allow-empty -m "a second commit to compare with"
}

two_refs() {
  clone_with_a_second_commit
  "$source_dir/tools/compare_releases.sh" HEAD~1 HEAD -- --floor --only churn-1t --runs 2 --rounds 2 \
    --scale 0.0005 --json "$work/comparison.json" --out "$work/generated" >"$work/table" 2>"$work/log" ||
    { cat "$work/log"; exit 1; }
  # The labels are Markdown text: '~' escaped, as every text of the page.
  grep -qxF '| Scenario | Figure | HEAD\~1 | HEAD | forwarding only |' "$work/table" || { cat "$work/table"; exit 1; }
  # The same sources are built once.
  [[ $(find "$work/compare" -maxdepth 1 -name 'build-*' -type d | wc -l) -eq 1 ]] ||
    { ls "$work/compare"; echo "two commits of one tree built twice"; exit 1; }
  # A row per figure; each cell the figure and its interval, each after the
  # first with its mark against the first.
  for figure in wall cpu; do
    grep -qE "^\| \`churn-1t\` \| $figure \| $cell \| $marked \| $marked \|\$" "$work/table" || { cat "$work/table"; exit 1; }
  done
  grep -q "median of 2 rounds" "$work/generated/release-comparison.md"
  grep -q "in wall-clock time and in CPU time (user + sys of the same runs)" "$work/generated/release-comparison.md"
  /usr/bin/python3 - "$work/comparison.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
assert [b["label"] for b in data["builds"]] == ["HEAD~1", "HEAD", "forwarding only"], data["builds"]
# The file names of the libraries, never the paths of this machine.
assert [b["library"] for b in data["builds"]] == ["libheapline.so", "libheapline.so", "libheapline_null.so"], data["builds"]
result = data["scenarios"][0]["results"][0]
assert len(result["rounds"]) == 2 and len(result["rounds"][0]["with"]) == 2, result
# The cpu figure beside the wall one: per round with its interval, and per build.
for r in result["rounds"]:
    assert r["cpu"]["interval"][0] <= r["cpu"]["overhead"] <= r["cpu"]["interval"][1], r["cpu"]
cpus = sorted(r["cpu"]["overhead"] for r in result["rounds"])
assert abs(result["cpu_overhead"] - (cpus[0] + cpus[1]) / 2) < 1e-12, result["cpu_overhead"]
PY
}

refused_refs() {
  clone_with_a_second_commit
  # A ref that does not exist: refused before anything is built.
  if "$source_dir/tools/compare_releases.sh" no-such-ref HEAD 2>"$work/err"; then echo "accepted a bad ref"; exit 1; fi
  grep -q "'no-such-ref' is not a commit" "$work/err"

  # A ref that does not build (named first: it is built first, and nothing
  # else needs building to refuse it).
  echo "this is not C++" >>"$work/repo/interposer/src/overrides/alloc_override.cpp"
  git -C "$work/repo" -c user.name=test -c user.email=test@example.invalid commit -qam "break the build"
  if "$source_dir/tools/compare_releases.sh" HEAD HEAD~1 2>"$work/err"; then echo "accepted a broken ref"; exit 1; fi
  grep -q "'HEAD' does not build libheapline.so" "$work/err" || { cat "$work/err"; exit 1; }
}

compare_options() {
  # A quick look without --json or --out writes beside the build, never into
  # the docs: the tracked docs/release-comparison.json changes only with
  # --write-docs, which takes no other destination.
  before=$(sha256sum "$source_dir/docs/release-comparison.json")
  rm -f "$build_dir/release-comparison/release-comparison.json"
  # (--lib, the former name of --build, still names a build.)
  "$bench" compare --lib "a=$build_dir/bin/libheapline.so" --floor --only churn-1t --runs 1 --rounds 1 \
    --scale 0.0005 >/dev/null 2>"$work/err" || { cat "$work/err"; exit 1; }
  [[ "$(sha256sum "$source_dir/docs/release-comparison.json")" == "$before" ]] ||
    { echo "a quick look changed docs/release-comparison.json"; exit 1; }
  [[ -f "$build_dir/release-comparison/release-comparison.json" && -f "$build_dir/release-comparison/release-comparison.md" ]] ||
    { echo "the quick look wrote no release-comparison.json and .md in $build_dir/release-comparison"; exit 1; }
  grep -q "raw data in .*/release-comparison/release-comparison.json" "$work/err" ||
    { cat "$work/err"; exit 1; }
  if "$bench" compare --build "a=$build_dir/bin/libheapline.so" --floor --write-docs --json "$work/x.json" 2>"$work/err"; then
    echo "accepted --write-docs with --json"; exit 1
  fi
  grep -qE -- "--(write-docs excludes --json|json excludes --write-docs)" "$work/err" || { cat "$work/err"; exit 1; }

  # compare itself refuses a missing library and a lone build.
  if "$bench" compare --build a=/nonexistent/lib.so --floor 2>"$work/err"; then echo "accepted a missing library"; exit 1; fi
  grep -q "does not exist" "$work/err"
  if "$bench" compare --floor 2>"$work/err"; then echo "accepted a single build"; exit 1; fi
  grep -q "at least two builds" "$work/err"

  # The same library under two settings is two builds: --env sets a variable
  # for one build's runs, kept in the JSON and said under the table.
  "$bench" compare --build "default=$build_dir/bin/libheapline.so" --build "exact=$build_dir/bin/libheapline.so" \
    --env exact:HEAPLINE_PRECISION=exact --env exact:HEAPLINE_INTERVAL_MS=5 --only churn-1t --runs 1 --rounds 1 \
    --scale 0.0005 --json "$work/settings.json" --out "$work/settings" >"$work/table" 2>"$work/err" ||
    { cat "$work/err"; exit 1; }
  grep -qxF 'exact: Run with HEAPLINE\_PRECISION=exact. Run with HEAPLINE\_INTERVAL\_MS=5.' "$work/table" ||
    { cat "$work/table"; exit 1; }
  /usr/bin/python3 - "$work/settings.json" <<'PY'
import json, sys
builds = json.load(open(sys.argv[1]))["builds"]
assert "env" not in builds[0], builds[0]
assert builds[1]["env"] == {"HEAPLINE_PRECISION": "exact", "HEAPLINE_INTERVAL_MS": "5"}, builds[1]
PY
  for setting in exact nolabel=1 :HEAPLINE_PRECISION=exact exact:=1; do
    if "$bench" compare --build "exact=$build_dir/bin/libheapline.so" --floor --env "$setting" 2>"$work/err"; then
      echo "accepted --env $setting"; exit 1
    fi
    grep -q "takes LABEL:NAME=VALUE, got '$setting'" "$work/err" || { cat "$work/err"; exit 1; }
  done
  if "$bench" compare --build "exact=$build_dir/bin/libheapline.so" --floor --env wide:HEAPLINE_PRECISION=exact \
    2>"$work/err"; then echo "accepted --env for a build that is not there"; exit 1; fi
  grep -q "names build 'wide', which is not one of the builds" "$work/err" || { cat "$work/err"; exit 1; }

  # heaptrack, the peer beside memusage: a column of its own when installed (its
  # trace discarded), "absent" with a note when not; never a refusal.
  "$bench" compare --build "heapline=$build_dir/bin/libheapline.so" --floor --heaptrack \
    --heaptrack-library /nonexistent/libheaptrack_preload.so --only churn-1t \
    --runs 1 --rounds 1 --scale 0.0005 --json "$work/absent.json" --out "$work/absent" >"$work/table" 2>"$work/err" ||
    { cat "$work/err"; exit 1; }
  grep -q "heaptrack is absent" "$work/err"
  grep -qE "^\| \`churn-1t\` \| wall \| $cell \| $marked \| absent \|\$" "$work/table" || { cat "$work/table"; exit 1; }
  grep -qxF 'heaptrack: absent, not installed here (no /nonexistent/libheaptrack\_preload.so; Debian package heaptrack).' \
    "$work/table" || { cat "$work/table"; exit 1; }
  heaptrack_library=/usr/lib/heaptrack/libheaptrack_preload.so
  if [[ -r "$heaptrack_library" ]]; then
    "$bench" compare --floor --heaptrack --only churn-1t --runs 1 --rounds 1 --scale 0.0005 \
      --json "$work/peer.json" --out "$work/peer" >"$work/table" 2>"$work/err" || { cat "$work/err"; exit 1; }
    grep -q '^| Scenario | Figure | forwarding only | heaptrack |$' "$work/table" || { cat "$work/table"; exit 1; }
    grep -q '^heaptrack: its recording library alone' "$work/table" || { cat "$work/table"; exit 1; }
    /usr/bin/python3 - "$work/peer.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
peer = data["builds"][1]
assert peer["library"] == "libheaptrack_preload.so" and peer["env"] == {"DUMP_HEAPTRACK_OUTPUT": "/dev/null"}, peer
PY
  fi

  # glibc's libmemusage.so, the closest peer: a column of its own.
  "$bench" compare --floor --memusage --only churn-1t --runs 1 --rounds 1 --scale 0.0005 --no-instructions \
    --json "$work/memusage.json" --out "$work/memusage" >"$work/table" 2>"$work/err" || { cat "$work/err"; exit 1; }
  grep -q '^| Scenario | Figure | forwarding only | libmemusage.so |$' "$work/table" || { cat "$work/table"; exit 1; }
  /usr/bin/python3 - "$work/memusage.json" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
assert [b["library"] for b in data["builds"]] == ["libheapline_null.so", "libmemusage.so"], data["builds"]
PY
}

"$case_name"
echo "compare_releases.sh end to end, $case_name: ok"
