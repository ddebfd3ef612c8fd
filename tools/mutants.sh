#!/usr/bin/env bash
# Mutation checks: do the tests fail when the product breaks?
#
#   tools/mutants.sh [NAME_REGEX]           the regression list, tools/mutants.list
#   tools/mutants.sh --sample N --seed S    N one-line bugs at random lines
#   tools/mutants.sh ... -j J               J mutants at once (default 1)
#   tools/mutants.sh ... --dry-run          print the mutants and the stale
#                                           entries they meet (status 1 if
#                                           any), run nothing
#   tools/mutants.sh ... --fresh            judge again what an earlier run of
#                                           the same sources judged
#   tools/mutants.sh --check                the list and tools/mutants.equivalent
#                                           still match the code (a test runs it)
#
# Each bug is applied alone to a scratch git worktree of the current
# checkout (HEAD plus uncommitted changes to tracked files), rebuilt
# incrementally and tested; each is then killed (a test failed), timeout (a
# test hung: caught too), survived (every test passed: a hole in the tests),
# not-compiling, or, for the list, stale (its original text moved: update
# the list). Then the kill rate, (killed + timeout) / (killed + timeout +
# survived).
#
# The list's bugs run the tests the list names for each. A sampled bug runs
# the tests of its module first (tools/mutants.py, MODULE_TESTS) and, when
# they all pass, the rest of the suite: a survivor passed every test. For
# each survivor it prints file:line, the line and its mutation. Sampled
# mutants that cannot change what heapline does are listed by hand, with
# the reason, in tools/mutants.equivalent, and left out of the rate.
#
# It takes a rebuild and a test run per bug (hours for a sample of 60 on two
# cores), so it is not part of tools/test.sh. Each verdict is appended to a
# journal named by the run (the list's file, or seed-S) and the sources' git
# trees (all but docs/, README.md and the workflows) as soon as it is
# reached, keyed by the bug's text and the tests it met: a run cut short and
# started again on the same sources judges only what is left, and does not
# run the unmutated tree's tests again once the same tests passed (that
# baseline runs on every core before any mutant). (A sample is drawn from
# the sources' lines: other sources, other mutants.) The scratch trees,
# their builds, the logs, the journals and a results file per run (per list,
# per seed) live in $HEAPLINE_MUTANTS_DIR (default build/mutants) and are
# reused by the next run. The tool's own variables (HEAPLINE_MUTANTS_LIST,
# HEAPLINE_MUTANTS_EQUIVALENT, HEAPLINE_MUTANTS_DIR) never reach the builds
# and tests it runs.
set -euo pipefail
# A step that fails says which: set -e alone would end the run without a word.
trap 'echo "${0##*/}: line $LINENO failed (status $?): $BASH_COMMAND" >&2' ERR
exec python3 "$(dirname "${BASH_SOURCE[0]}")/mutants.py" "$@"
