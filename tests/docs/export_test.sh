#!/usr/bin/env bash
# export_test.sh SOURCE_DIR BENCH: `heapline-bench export` on a real store
# (a point the suite measured, and the legacy points of an older store): the
# CSV has one row per point with its figures, github-action-benchmark's JSON
# has one entry per point of the chosen commit, and a store with a bad line
# is refused with nothing written.
set -euo pipefail
source_dir=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { printf 'FAIL: %s\n' "$*" >&2; exit 1; }

commit=5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a5a
mkdir -p "$work/store"
"$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" >/dev/null
"$bench" suite --store "$work/store" --only churn-1t --runs 2 --scale 0.0005 --commit "$commit" \
  --out "$work/page" >/dev/null 2>&1 || fail "the suite did not measure churn-1t"

"$bench" export --store "$work/store" --out "$work/points.csv" 2>/dev/null
"$bench" export --store "$work/store" --format github-action-benchmark >"$work/action.json"
/usr/bin/python3 - "$work/store/points.jsonl" "$work/points.csv" "$work/action.json" "$commit" <<'PY'
import csv, json, sys
points = [json.loads(line) for line in open(sys.argv[1])]
rows = list(csv.DictReader(open(sys.argv[2], newline="")))
assert len(rows) == len(points) == 5, (len(rows), len(points))
for point, row in zip(points, rows):
    assert abs(float(row["wall_pct"]) - point["overhead"] * 100) < 1e-6, (row, point)
    assert row["scenario"] == point.get("scenario", "churn-4t"), row
    assert row["measured_at"] == point["measured_at"], row
assert rows[0]["timing"] == "benchmark" and rows[0]["wall_pct"] == "409", rows[0]
measured = rows[-1]
assert measured["commit"] == sys.argv[4] and measured["runs"] == "2" and measured["timing"] == "command", measured
assert "cores" in measured["machine"], measured

action = json.load(open(sys.argv[3]))
point = points[-1]
# One entry per figure the point has (wall, cpu, instructions), each a ratio
# with / without heapline, so that the action's current / previous means
# what it assumes.
names = [entry["name"] for entry in action]
base = "churn-1t (" + point["machine"]["fingerprint"] + ")"
assert names[0] == base + " wall" and set(names) <= {base + " wall", base + " cpu", base + " instructions"}, names
wall = action[0]
assert wall["unit"] == "with / without heapline" and abs(wall["value"] - (1 + point["overhead"])) < 1e-9, wall
assert wall["range"].startswith("95% CI ["), wall
assert sys.argv[4] in wall["extra"], wall
PY

# An older commit, by a prefix: the two legacy points of 3333333.
"$bench" export --store "$work/store" --format github-action-benchmark --commit 3333333 |
  /usr/bin/python3 -c 'import json,sys; a=json.load(sys.stdin); assert sorted({e["name"].split()[0] for e in a}) == ["churn-4t", "resident-4t"], a'

# A bad line: refused, nothing written.
echo '{"overhead": ' >>"$work/store/points.jsonl"
if "$bench" export --store "$work/store" --out "$work/bad.csv" 2>"$work/err"; then fail "exported a store with a bad line"; fi
grep -q "unreadable lines" "$work/err" || { cat "$work/err"; fail "no reason given"; }
[[ ! -e "$work/bad.csv" ]] || fail "a refused export wrote its file"
echo "export: ok"
