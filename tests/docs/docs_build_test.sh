#!/usr/bin/env bash
# The docs build with warnings as errors, on a copy of docs/ whose
# _generated/ pages are rendered from a fixture store (and from an empty one).
set -euo pipefail
source_dir=$1 bench=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# docs/conf.py reads the version from the CMakeLists.txt beside docs/.
build_docs() {  # build_docs STORE_DIR
  rm -rf "$work/src" "$work/html"
  mkdir -p "$work/src"
  cp -r "$source_dir/docs" "$work/src/docs"
  cp "$source_dir/CMakeLists.txt" "$work/src/"
  rm -rf "$work/src/docs/_generated" "$work/src/docs/_build"
  "$bench" render --store "$1" --out "$work/src/docs/_generated" >/dev/null 2>&1
  /usr/bin/python3 -m sphinx -W --keep-going -q -b html "$work/src/docs" "$work/html"
}

# An empty store (a directory without points) renders a page that says so,
# and the docs still build.
mkdir -p "$work/empty-store"
build_docs "$work/empty-store"
grep -q "No point has been measured yet" "$work/html/performance.html"
# The user's recorded history is there, with its provenance, whatever the
# store holds; and the version is CMake's.
for text in "Recorded history: releases 0.2.0 to 0.4.0" "not measured by this project" "363%" "168%" \
  "409%" "402%" "i7-10700F at 2.90 GHz, under WSL2" "median of three rounds" \
  "bench/run_overhead.sh SCENARIO LIB 10 -- COMMAND"; do
  grep -qF "$text" <(sed -e 's/<[^>]*>//g' "$work/html/performance.html" | tr -s ' \n' ' ') ||
    { echo "performance.html lacks '$text'"; exit 1; }
done
version=$(sed -nE 's/^[[:space:]]*VERSION[[:space:]]+([0-9.]+)$/\1/p' "$source_dir/CMakeLists.txt" | head -n 1)
grep -q "heapline $version" "$work/html/index.html" || { echo "index.html does not show version $version"; exit 1; }
grep -q "Statistics" "$work/html/design.html"

# A store with legacy points (imported) renders a table and plots.
mkdir -p "$work/store"
"$bench" import --store "$work/store" "$source_dir/tests/fixtures/legacy_points.jsonl" >/dev/null
build_docs "$work/store"
grep -q "+409.0%" "$work/html/performance.html"
grep -q "<table" "$work/html/performance.html"
grep -q "like a simulation with its arrays" "$work/html/performance.html"  # the catalogue table
# gnuplot is a dependency (tools/setup.sh): without it the plots are missing
# and this fails.
ls "$work/html/_images/"churn-4t*.svg >/dev/null
echo "docs build: ok"
