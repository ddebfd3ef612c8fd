#!/usr/bin/env bash
# workflow_policy_test.sh: the workflows keep heapline's rules
# (workflow_policy.py), and the checker does catch a workflow that breaks
# them: event text in a script, write access for all, an unpinned action, a
# pull_request trigger on the performance workflow; a token kept in the
# measuring job's checkout, Pages rights outside the deploy job, a build in a
# job that can write, an unpinned container, a deploy job that runs more than
# the deployment; a pull-request workflow on pull_request_target, with a
# write token or a checkout that keeps it; a release workflow on a branch,
# writing where it builds, building or running more where it publishes; a
# site whose release table is not the release's; a ci workflow without its
# arm64 job on an arm64 runner; a performance history measured on one
# machine only.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
policy=$ci_tests_dir/workflow_policy.py
workflows=$source_dir/.github/workflows

# Debian's python3 has PyYAML (python3-yaml); a version manager's may not.
python=/usr/bin/python3
"$python" "$policy" "$source_dir"

# changed_workflow IN OUT: the workflow IN, changed by the Python read on
# standard input (which finds it loaded as `workflow`), written to OUT.
changed_workflow() {
  "$python" -c '
import sys
import yaml
workflow = yaml.safe_load(open(sys.argv[1]))
exec(sys.stdin.read())
yaml.safe_dump(workflow, open(sys.argv[2], "w"), sort_keys=False)' "$1" "$2"
}

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

# The jobs of the performance workflow.
bad=$scratch/performance-jobs.yml
changed_workflow "$workflows/performance.yml" "$bad" <<'PY'
jobs = workflow["jobs"]
for step in jobs["measure"]["steps"]:
    if step.get("uses", "").startswith("actions/checkout@"):
        step["with"]["persist-credentials"] = True
jobs["site"]["permissions"]["pages"] = "write"
jobs["publish"]["steps"].insert(0, {"name": "Build", "run": "tools/build.sh"})
jobs["site"]["container"] = "debian:12"
jobs["deploy"]["steps"].insert(0, {"name": "Look around", "run": "ls"})
PY
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on bad jobs"
assert_contains "$report" "job measure: checkout must not keep the token (persist-credentials: false)" "the report"
assert_contains "$report" "job site's permissions must be exactly {'contents': 'read'}" "the report"
assert_contains "$report" "job publish can write: it must not install or build anything (runs \`tools/build.sh\`)" "the report"
assert_contains "$report" "job site: container \`debian:12\` is not debian:12 pinned by digest" "the report"
assert_contains "$report" "job deploy must run actions/deploy-pages and nothing else" "the report"

# The pull-request workflow.
bad=$scratch/pull-request.yml
sed -e 's|^  pull_request:|  pull_request_target:|' \
  -e 's|^      contents: read|      contents: write|' \
  -e 's|persist-credentials: false|persist-credentials: true|' \
  "$workflows/pull-request.yml" >"$bad"
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$workflows/performance.yml" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a bad pull-request workflow"
assert_contains "$report" "runs on pull_request_target" "the report"
assert_contains "$report" "must run on pull_request only" "the report"
assert_contains "$report" "job compare must hold a read-only token" "the report"
assert_contains "$report" "job compare: checkout must not keep the token" "the report"
# Once per change, main's own history group, the Pages setting, and a
# pull-request filter that would hide a change of the library.
bad_ci=$scratch/ci.yml
bad=$scratch/performance-rules.yml
bad_pr=$scratch/pull-request-filter.yml
changed_workflow "$workflows/ci.yml" "$bad_ci" <<'PY'
for job in workflow["jobs"].values():
    job.pop("if", None)
PY
changed_workflow "$workflows/performance.yml" "$bad" <<'PY'
workflow["concurrency"]["group"] = "performance-history"
workflow["jobs"]["deploy"]["steps"] = [s for s in workflow["jobs"]["deploy"]["steps"] if "run" not in s]
PY
changed_workflow "$workflows/pull-request.yml" "$bad_pr" <<'PY'
workflow[True]["pull_request"]["paths-ignore"].append("interposer/**")
workflow["jobs"]["compare"]["steps"][-1]["continue-on-error"] = True
PY
status=0
report=$("$python" "$policy" "$source_dir" "$bad_ci" "$bad" "$bad_pr") || status=$?
assert_eq "$status" 1 "the checker's status on the rules of runs"
assert_contains "$report" "job build-and-test must run once per change" "the report"
assert_contains "$report" "concurrency must be the one group performance-history for main" "the report"
assert_contains "$report" "job deploy must say on failure what a repository whose Pages are off sets once" "the report"
assert_contains "$report" "paths-ignore must not filter out interposer/" "the report"
assert_contains "$report" "job compare must fail when compare_pull_request.sh fails" "the report"
# The ci workflow without its sanitizer job, then with the sanitizers run
# in the ordinary job.
bad=$scratch/ci.yml
changed_workflow "$workflows/ci.yml" "$bad" <<'PY'
del workflow["jobs"]["sanitize"]
PY
status=0
report=$("$python" "$policy" "$source_dir" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a ci workflow without the sanitizer job"
assert_contains "$report" "one job must run \`tools/test.sh --sanitize\`" "the report"
sed -e 's|run: tools/test.sh$|run: tools/test.sh \&\& tools/test.sh --sanitize|' "$workflows/ci.yml" >"$bad"
sed -i -e '/^  sanitize:/,/^  arm64:/{/^  arm64:/!d}' "$bad"
status=0
report=$("$python" "$policy" "$source_dir" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on sanitizers inside the ordinary job"
assert_contains "$report" "one job must run \`tools/test.sh --sanitize\`, and only that test command" "the report"
# The release workflow: a trigger other than a pushed tag, write access in the
# job that builds, a build in the job that publishes, a publish step that
# runs more than the script, a checkout that keeps the token.
bad=$scratch/release.yml
changed_workflow "$workflows/release.yml" "$bad" <<'PY'
workflow[True]["push"]["branches"] = ["main"]
jobs = workflow["jobs"]
jobs["package"]["permissions"]["contents"] = "write"
jobs["publish"]["steps"].insert(0, {"name": "Build", "run": "tools/build.sh"})
jobs["publish"]["steps"][-1]["run"] += " && echo done"
for step in jobs["publish"]["steps"]:
    if step.get("uses", "").startswith("actions/checkout@"):
        step["with"]["persist-credentials"] = True
PY
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$workflows/performance.yml" "$workflows/pull-request.yml" \
  "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a bad release workflow"
assert_contains "$report" "must run on a pushed release tag only" "the report"
assert_contains "$report" "job package's permissions must be exactly {'contents': 'read'}" "the report"
assert_contains "$report" "job publish can write: it must not install or build anything (runs \`tools/build.sh\`)" "the report"
assert_contains "$report" "job publish may run tools/ci/publish_release.sh" "the report"
assert_contains "$report" "job publish: checkout must not keep the token" "the report"
# The site's release table must be the release's.
bad=$scratch/performance-site.yml
grep -v 'run: tools/ci/fetch_release_comparison.py' "$workflows/performance.yml" >"$bad"
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a site without the release's comparison"
assert_contains "$report" "job site must take the latest release's comparison" "the report"
# The arm64 suite on an x86-64 runner (emulated, past the budget), then
# without its job.
sed -e 's|runs-on: ubuntu-24.04-arm|runs-on: ubuntu-latest|' "$workflows/ci.yml" >"$bad"
status=0
report=$("$python" "$policy" "$source_dir" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on the arm64 suite on an x86-64 runner"
assert_contains "$report" "one job must run \`tools/test.sh --arch arm64\`, on \`runs-on: ubuntu-24.04-arm\`" "the report"
changed_workflow "$workflows/ci.yml" "$bad" <<'PY'
del workflow["jobs"]["arm64"]
PY
status=0
report=$("$python" "$policy" "$source_dir" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a ci workflow without the arm64 job"
assert_contains "$report" "one job must run \`tools/test.sh --arch arm64\`" "the report"
# The performance history on one machine only, the machines' hand-offs
# under one name, and a publish that takes one of them.
bad=$scratch/performance-one-machine.yml
changed_workflow "$workflows/performance.yml" "$bad" <<'PY'
jobs = workflow["jobs"]
jobs["measure"]["strategy"]["matrix"]["include"].pop()
for step in jobs["measure"]["steps"]:
    if step.get("uses", "").startswith("actions/upload-artifact@"):
        step["with"]["name"] = "new-points"
for step in jobs["publish"]["steps"]:
    if step.get("uses", "").startswith("actions/download-artifact@"):
        step["with"] = {"name": "new-points-x86-64", "path": "build/ci/new-points"}
PY
status=0
report=$("$python" "$policy" "$source_dir" "$workflows/ci.yml" "$bad") || status=$?
assert_eq "$status" 1 "the checker's status on a performance history of one machine"
assert_contains "$report" "job measure must run on a matrix of an x86-64 runner (ubuntu-latest) and an arm64 one" "the report"
assert_contains "$report" "job measure's artifact must be named after its machine" "the report"
assert_contains "$report" "job publish must take every machine's points (pattern: new-points-*" "the report"
echo "workflow policy test: ok"
