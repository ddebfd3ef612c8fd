#!/usr/bin/env bash
# The docs build with warnings as errors, on a copy of docs/ whose
# _generated/ pages are rendered from a fixture store (and from an empty one).
set -euo pipefail
source_dir=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

build_docs() {  # build_docs STORE_DIR
  rm -rf "$work/docs" "$work/html"
  cp -r "$source_dir/docs" "$work/docs"
  rm -rf "$work/docs/_generated" "$work/docs/_build"
  "$bench" render --store "$1" --out "$work/docs/_generated" >/dev/null 2>&1
  /usr/bin/python3 -m sphinx -W --keep-going -q -b html "$work/docs" "$work/html"
}

# An empty store renders a page that says so, and the docs still build.
build_docs "$work/empty-store"
grep -q "No point has been measured yet" "$work/html/performance.html"

# A store with legacy points (imported) renders a table and plots.
"$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" >/dev/null
build_docs "$work/store"
grep -q "+409.0%" "$work/html/performance.html"
grep -q "<table" "$work/html/performance.html"
grep -q "like a simulation with its arrays" "$work/html/performance.html"  # the catalogue table
# gnuplot is a dependency (tools/setup.sh): without it the plots are missing
# and this fails.
ls "$work/html/_images/"churn-4t*.svg >/dev/null
echo "docs build: ok"
