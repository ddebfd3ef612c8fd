#!/usr/bin/env bash
# site_build_test.sh SOURCE_DIR BENCH: the site as the performance workflow
# builds it (tools/ci/build_site.sh), from a store of 30 points over 2
# machines with a change point: the page's table lists every measured commit
# with a row per machine that measured it, before the page's prose; the plot
# names the same commits, the machines and the change point, in a panel per
# figure; its gnuplot script is published and draws the plots again on its
# own; the raw points are published beside the docs. gnuplot is a dependency
# (tools/setup.sh).
set -euo pipefail
source_dir=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

# A copy of the tree the site is built from, so the test writes nothing into
# the source tree.
mkdir -p "$work/src/tools"
cp -r "$source_dir/docs" "$work/src/docs"
cp "$source_dir/CMakeLists.txt" "$work/src/"
rm -rf "$work/src/docs/_generated" "$work/src/docs/_build"
/usr/bin/python3 "$source_dir/tests/docs/make_history_store.py" "$work/store"

HEAPLINE_REPO_DIR=$work/src HEAPLINE_STORE_DIR=$work/store HEAPLINE_BENCH=$bench HEAPLINE_SITE_DIR=$work/site \
  "$source_dir/tools/ci/build_site.sh"

page=$work/site/performance.html
[[ -f "$page" ]] || fail "no performance.html in the site"
cmp -s "$work/store/points.jsonl" "$work/site/points.jsonl" || fail "the site's points.jsonl is not the store's"
# Every one of the 20 commits is a row of the table, by its short SHA.
for i in $(seq 1 20); do
  sha=$(printf '%02xc0ffe' "$i")
  grep -q "$sha" "$page" || fail "the table has no row for commit $sha"
done
grep -q "<table" "$page" || fail "no table in the page"
# Commit 14c0ffe was measured on both machines: a row for each, by name.
text=$(sed -e 's/<[^>]*>//g' "$page" | tr -s ' \n' ' ')
for machine in "AMD EPYC 7763 64-Core, 4 cores" "Intel Xeon Platinum 8370C, 4 cores"; do
  grep -qF "14c0ffe $machine 2026-10-20" <<<"$text" || fail "no row of 14c0ffe on $machine"
done
# The history comes before the page's prose on how the figure is computed.
history_at=$(grep -bo "14c0ffe" <<<"$text" | head -n 1 | cut -d: -f1)
prose_at=$(grep -bo "keeps 64 blocks per thread" <<<"$text" | head -n 1 | cut -d: -f1)
((history_at < prose_at)) || fail "the history table comes after the prose ($history_at, $prose_at)"
# The plot of churn-4t names the same commits on its x axis, each machine in
# its key by the fingerprint the table shows, and the change point.
plot=$(compgen -G "$work/site/_images/churn-4t*.svg" | head -n 1) || fail "no plot of churn-4t in the site"
for text in 01c0ffe 0bc0ffe 14c0ffe aaaa00000001 bbbb00000002 "change point" "95% interval" "wall clock (%)" \
  "CPU time (%)" "instructions (%)"; do
  grep -qF "$text" "$plot" || fail "the plot of churn-4t lacks '$text'"
done
# The published script draws the plots again, alone, in any directory.
script=$(compgen -G "$work/site/_downloads/*/history.gp" | head -n 1) || fail "no history.gp in the site"
grep -q "history.gp" "$page" || fail "the page does not link history.gp"
mkdir "$work/again" && cp "$script" "$work/again/"
rm -rf "$work/src/docs/_generated"
(cd "$work/again" && gnuplot history.gp) || fail "the published history.gp does not run"
cmp -s "$work/again/churn-4t.svg" "$plot" || fail "the published history.gp draws another churn-4t.svg"
echo "site build: ok"
