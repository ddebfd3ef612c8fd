#!/usr/bin/env bash
# tools/ci/check_regressions.sh
#
# The regression verdict on the newest points, as the workflow's last step:
# `heapline-bench check` when this heapline-bench has it, otherwise a note
# that verdicts do not exist yet. Under GitHub Actions (--github) every
# regression becomes an error annotation and the verdict table goes into the
# run summary. The run fails on a regression only when
# HEAPLINE_FAIL_ON_REGRESSION=1: a point is recorded either way.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_bench
# The help is captured first: grep -q would stop reading early and fail
# the pipeline.
help=$("$bench" --help 2>&1 || true)
if grep -qE '^[[:space:]]+check([[:space:]]|$)' <<<"$help"; then
  args=(check --store "$store_dir")
  [[ "${GITHUB_ACTIONS:-}" == "true" ]] && args+=(--github)
  [[ "${HEAPLINE_FAIL_ON_REGRESSION:-0}" == "1" ]] && args+=(--fail-on-regression)
  exec "$bench" "${args[@]}"
fi
say "this heapline-bench has no check subcommand yet: no regression verdicts"
