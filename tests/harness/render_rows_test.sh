#!/usr/bin/env bash
# render from the command line shows the last 25 measured commits unless
# --rows says otherwise: the page's table is the user's "last 25".
set -euo pipefail
bench=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

for i in $(seq 1 30); do
  printf '{"measured_at": "2025-01-%02dT10:00:00Z", "overhead": 4.%02d, "commit": "%040x"}\n' "$i" "$i" "$i"
done >"$work/points.jsonl"
mkdir -p "$work/store"
"$bench" import --store "$work/store" "$work/points.jsonl" | grep -q "imported 30 point"

# The rows of the first table only (the user's wall-clock table); the CPU and
# instruction table below it lists the same commits.
table_rows() { awk '/^\| Commit/{n++} n==1' "$1" | grep -cE '^\| `?[0-9a-f]{7}'; }
"$bench" render --store "$work/store" --out "$work/gen" --no-plots >/dev/null
grep -q "The table shows the last 25 measured commit(s)" "$work/gen/performance.md"
[[ $(table_rows "$work/gen/performance.md") -eq 25 ]] || { echo "expected 25 rows"; exit 1; }
"$bench" render --store "$work/store" --out "$work/gen3" --no-plots --rows 3 >/dev/null
grep -q "The table shows the last 3 measured commit(s)" "$work/gen3/performance.md"
[[ $(table_rows "$work/gen3/performance.md") -eq 3 ]] || { echo "expected 3 rows"; exit 1; }
echo "render rows: ok"
