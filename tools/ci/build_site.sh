#!/usr/bin/env bash
# tools/ci/build_site.sh
#
# Builds the project's site: renders the history page from the store (a
# checkout of the bench-data branch, see checkout_store.sh) into
# docs/_generated/, then the Sphinx docs, with warnings as errors, into
# $HEAPLINE_SITE_DIR (default build/site), which the workflow deploys to
# GitHub Pages. An empty store gives a page that says no point was measured
# yet. Also copies the store's points.jsonl into the site (`points.jsonl`), so
# readers can take the raw history with them.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_bench
site_dir=${HEAPLINE_SITE_DIR:-$repo_dir/build/site}
[[ -d "$store_dir" ]] || die "no store at $store_dir (run tools/ci/checkout_store.sh first)"

generated=$repo_dir/docs/_generated
rm -rf "$generated" "$site_dir"
"$bench" render --store "$store_dir" --out "$generated"
# Sphinx and MyST are Debian's (tools/setup.sh --test), under Debian's
# python3, whatever python3 comes first on PATH (a version manager's may
# lack them).
/usr/bin/python3 -m sphinx -W --keep-going -q -b html "$repo_dir/docs" "$site_dir"
points=$(store_points_path)
if [[ -f "$points" ]]; then
  cp "$points" "$site_dir/points.jsonl"
fi
say "site in $site_dir, from $store_dir ($( [[ -f "$points" ]] && wc -l <"$points" || echo 0) point(s))"
