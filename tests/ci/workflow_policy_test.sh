#!/usr/bin/env bash
# workflow_policy_test.sh: the workflows keep heapline's rules
# (workflow_policy.py), and the checker does catch a workflow that breaks
# them: event text in a script, write access for all, an unpinned action, a
# pull_request trigger on the performance workflow.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
policy=$ci_tests_dir/workflow_policy.py
workflows=$source_dir/.github/workflows

# Debian's python3 has PyYAML (python3-yaml); a version manager's may not.
python=/usr/bin/python3
"$python" "$policy" "$source_dir"

# A grep that needs no YAML parser: prints each `${{ github.event` inside a
# run: block (the line of run: and the lines indented below it).
event_text_in_run() {
  awk '
    in_run { match($0, /^[[:space:]]*/); if (RLENGTH <= indent && $0 !~ /^[[:space:]]*$/) in_run = 0 }
    /^[[:space:]]*(- )?run:/ { in_run = 1; match($0, /^[[:space:]]*(- )?/); indent = RLENGTH }
    in_run && /\$\{\{ *github\.event/ { print FILENAME ":" FNR ": " $0 }' "$@"
}
found=$(event_text_in_run "$workflows"/*.yml)
[[ -z "$found" ]] || fail "event text expanded inside run: blocks:"$'\n'"$found"

bad=$scratch/performance.yml
sed -e 's|^  workflow_dispatch:|  workflow_dispatch:\n  pull_request:|' \
  -e 's|^  contents: read|  contents: write|' \
  -e 's|run: tools/ci/run_suite.sh|run: tools/ci/run_suite.sh "${{ github.event.head_commit.message }}"|' \
  -e 's|actions/upload-artifact@[0-9a-f]*|actions/upload-artifact@v4|' \
  "$workflows/performance.yml" >"$bad"
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a bad workflow"
assert_contains "$report" "top-level permissions must be exactly \`contents: read\`" "the report"
assert_contains "$report" "step 'Run the suite into the store': expression" "the report"
assert_contains "$report" "\`actions/upload-artifact@v4\` is not pinned" "the report"
assert_contains "$report" "must run on push to main and workflow_dispatch only" "the report"
assert_contains "$(event_text_in_run "$bad")" "run: tools/ci/run_suite.sh \"\${{ github.event.head_commit.message }}\"" \
  "the grep for event text in run: blocks"
echo "workflow policy test: ok"
