#!/usr/bin/env bash
# tools/ci/check_regressions.sh
#
# The regression verdict on the newest points, as the workflow's last step:
# `heapline-bench check` when this heapline-bench has it (its exit status
# marks the run), otherwise a note that verdicts do not exist yet.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

require_bench
# The help is captured first: grep -q would stop reading early and fail
# the pipeline.
help=$("$bench" --help 2>&1 || true)
if grep -qE '^[[:space:]]+check([[:space:]]|$)' <<<"$help"; then
  exec "$bench" check --store "$store_dir"
fi
say "this heapline-bench has no check subcommand yet: no regression verdicts"
