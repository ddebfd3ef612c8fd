#!/usr/bin/env python3
"""workflow_policy.py SOURCE_DIR [CI.yml PERFORMANCE.yml PULL_REQUEST.yml RELEASE.yml]

The security and behaviour rules of heapline's three workflows, which a
schema or a linter does not know: least privilege (a write permission only in
the job that needs it, and no build, install or container there), no token
kept in a checkout where code is built and run, containers and actions pinned
by digest, no expression expanded into a script, no secrets; the performance
workflow's trigger, concurrency, main-only guard and its four jobs (measure,
on an x86-64 and an arm64 runner, publish, site, deploy) with the hand-off
between them; the pull-request
workflow's single read-only job; the ci workflow's sanitizer build
(`tools/test.sh --sanitize`) and its arm64 suite (`tools/test.sh --arch
arm64`, on an arm64 runner) in jobs of their own; the release workflow's
trigger (a pushed vX.Y.Z tag) and its two jobs, one that builds and
measures with a read-only token, one that only hands the files to the
GitHub CLI. Prints one line per broken rule and exits 1 when there is any.
"""
import os
import re
import sys

import yaml

problems = []


def check(condition, file, message):
    if not condition:
        problems.append(f"{file}: {message}")


def triggers(workflow):
    # YAML 1.1 reads the key `on` as the boolean true.
    on = workflow.get("on", workflow.get(True))
    if isinstance(on, str):
        return {on: None}
    if isinstance(on, list):
        return {name: None for name in on}
    return on or {}


def steps(workflow):
    for job_name, job in (workflow.get("jobs") or {}).items():
        for step in job.get("steps") or []:
            yield job_name, step


def common_rules(path, text, workflow, source_dir):
    check(workflow.get("permissions") == {"contents": "read"}, path,
          "top-level permissions must be exactly `contents: read`")
    check("secrets." not in text, path, "uses a secret; these workflows need none")
    check("pull_request_target" not in triggers(workflow), path,
          "runs on pull_request_target, which gives forks' code a write token")
    for job_name, step in steps(workflow):
        name = step.get("name", step.get("uses", "?"))
        script = step.get("run")
        if script is not None:
            # Any expression in a script is text pasted into shell before it
            # runs; values reach scripts through env: only.
            check("${{" not in script, path,
                  f"job {job_name}, step '{name}': expression `${{{{ ... }}}}` inside run: (pass it through env:)")
            for script_path in re.findall(r"(?:^|\s)((?:tools|bench|\.ci)/[\w./-]+)", script):
                full = os.path.join(source_dir, script_path)
                check(os.path.isfile(full) and os.access(full, os.X_OK), path,
                      f"job {job_name}, step '{name}': runs {script_path}, which is not an executable file")
        uses = step.get("uses")
        if uses is not None:
            check(re.fullmatch(r"[\w.-]+/[\w./-]+@[0-9a-f]{40}", uses) is not None, path,
                  f"job {job_name}: `{uses}` is not pinned to a full commit SHA")
            check(re.search(re.escape(uses) + r" # v\d", text) is not None, path,
                  f"job {job_name}: `{uses}` has no `# vX.Y.Z` comment naming its tag")


ONCE_PER_CHANGE = "github.event_name == 'push' || github.event.pull_request.head.repo.full_name != github.repository"
MAIN_ONLY_GROUP = ("${{ github.ref == 'refs/heads/main' && 'performance-history' || "
                   "format('performance-history-off-main-{0}', github.run_id) }}")
PAGES_SETTING = "Settings > Pages > Build and deployment > Source: GitHub Actions"


def ci_rules(path, workflow):
    on = triggers(workflow)
    check("push" in on and "pull_request" in on, path, "must run on push and pull_request")
    for job_name, job in workflow["jobs"].items():
        check("write" not in str(job.get("permissions", "")), path, f"job {job_name} must not write")
        # A same-repository pull request's branch is tested by its push.
        check(str(job.get("if", "")) == ONCE_PER_CHANGE, path,
              f"job {job_name} must run once per change (if: {ONCE_PER_CHANGE})")
    scripts = "\n".join(str(step.get("run", "")) for _, step in steps(workflow))
    for command in ("tools/setup.sh --test", "tools/test.sh", "python3 -m sphinx -W -b html docs docs/_build/html"):
        check(command in scripts, path, f"no step runs `{command}`")
    # The sanitizer build in a job of its own, beside the ordinary tests.
    sanitizing = [name for name, job in workflow["jobs"].items() if "tools/test.sh --sanitize" in runs_of(job)]
    check(len(sanitizing) == 1 and not re.search(r"tools/test\.sh(?! --sanitize)", runs_of(workflow["jobs"][sanitizing[0]])),
          path, "one job must run `tools/test.sh --sanitize`, and only that test command")
    # The arm64 suite in a job of its own, on GitHub's arm64 runner (natively:
    # on another runner the command would emulate it, past CI's budget).
    on_arm64 = [name for name, job in workflow["jobs"].items() if "tools/test.sh --arch arm64" in runs_of(job)]
    check(len(on_arm64) == 1 and workflow["jobs"][on_arm64[0]].get("runs-on") == "ubuntu-24.04-arm"
          and not re.search(r"tools/test\.sh(?! --arch arm64)", runs_of(workflow["jobs"][on_arm64[0]])),
          path, "one job must run `tools/test.sh --arch arm64`, on `runs-on: ubuntu-24.04-arm`, and only that test command")
    # docs/ includes _generated/ pages, which exist only once rendered.
    render = scripts.find("heapline-bench render --store")
    check(0 <= render < scripts.find("python3 -m sphinx"), path,
          "the docs are built before `heapline-bench render` writes docs/_generated")


def job_permissions(job):
    return job.get("permissions") or {}


def writes(job):
    return any(value == "write" for value in job_permissions(job).values())


def uses_of(job):
    return [str(step.get("uses", "")) for step in job.get("steps") or []]


def runs_of(job):
    return "\n".join(str(step.get("run", "")) for step in job.get("steps") or [])


PINNED_CONTAINER = re.compile(r"debian:12@sha256:[0-9a-f]{64}")


def job_rules(path, workflow):
    """Every workflow: containers pinned by digest, and no token left in a
    checkout of a job that cannot write (where the build and the measured
    programs run), nor any build or package install in a job that can."""
    for job_name, job in (workflow.get("jobs") or {}).items():
        container = job.get("container")
        if container is not None:
            image = container.get("image") if isinstance(container, dict) else container
            check(PINNED_CONTAINER.fullmatch(str(image)) is not None, path,
                  f"job {job_name}: container `{image}` is not debian:12 pinned by digest (@sha256:...)")
        for step in job.get("steps") or []:
            if str(step.get("uses", "")).startswith("actions/checkout@") and not writes(job):
                check((step.get("with") or {}).get("persist-credentials") is False, path,
                      f"job {job_name}: checkout must not keep the token (persist-credentials: false)")
        if writes(job):
            check(container is None, path, f"job {job_name} can write: it must not run in a container it pulls")
            for command in ("tools/setup.sh", "tools/build.sh", "cmake", "apt-get", "npm", "pip"):
                check(command not in runs_of(job), path,
                      f"job {job_name} can write: it must not install or build anything (runs `{command}`)")


def performance_rules(path, workflow):
    on = triggers(workflow)
    check(set(on) == {"push", "workflow_dispatch"}, path,
          f"must run on push to main and workflow_dispatch only, not {sorted(on)}")
    check((on.get("push") or {}).get("branches") == ["main"], path, "push must be limited to branches: [main]")
    check(workflow.get("concurrency") == {"group": MAIN_ONLY_GROUP, "cancel-in-progress": False}, path,
          "concurrency must be the one group performance-history for main (a group of its own for a run off "
          "main), without cancel-in-progress")
    jobs = workflow.get("jobs") or {}
    check(set(jobs) == {"measure", "publish", "site", "deploy"}, path,
          f"the jobs must be measure, publish, site and deploy, not {sorted(jobs)}")
    if set(jobs) != {"measure", "publish", "site", "deploy"}:
        return
    for job_name, job in jobs.items():
        check("github.ref == 'refs/heads/main'" in str(job.get("if", "")), path,
              f"job {job_name} must be skipped off main (its if: must test github.ref == 'refs/heads/main')")
    expected = {
        "measure": {"contents": "read"},
        "publish": {"contents": "write"},
        "site": {"contents": "read"},
        "deploy": {"pages": "write", "id-token": "write"},
    }
    for job_name, permissions in expected.items():
        check(job_permissions(jobs[job_name]) == permissions, path,
              f"job {job_name}'s permissions must be exactly {permissions}, not {job_permissions(jobs[job_name])}")
    needs = {name: job.get("needs") for name, job in jobs.items()}
    check(needs == {"measure": None, "publish": "measure", "site": "publish", "deploy": "site"}, path,
          f"the jobs must run measure -> publish -> site -> deploy, not {needs}")

    measure, publish, site, deploy = (jobs[name] for name in ("measure", "publish", "site", "deploy"))
    for script in ("tools/ci/checkout_store.sh", "tools/ci/run_suite.sh", "tools/ci/check_regressions.sh",
                   "tools/build.sh", "heapline-bench validate"):
        check(script in runs_of(measure), path, f"job measure does not run {script}")
    check("publish_points.sh" not in runs_of(measure), path, "job measure must not publish (it cannot write)")
    check("scenarios/allocators.json" in str((measure.get("env") or {}).get("HEAPLINE_CATALOGUES", "")), path,
          "job measure must also measure the allocator entries (HEAPLINE_CATALOGUES with scenarios/allocators.json)")
    check((measure.get("env") or {}).get("HEAPLINE_STORE_OFFLINE") == "1", path,
          "job measure must read the store offline (HEAPLINE_STORE_OFFLINE: \"1\"): it has no token to fetch with")
    check(any(u.startswith("actions/upload-artifact@") for u in uses_of(measure)), path,
          "job measure does not hand the new points over (actions/upload-artifact)")
    check("steps.upload.outputs.artifact-id" in str((measure.get("outputs") or {}).get("points", "")), path,
          "job measure must output the uploaded artifact's id as `points`")
    # One measuring job per machine, x86-64 and arm64, each its own
    # artifact; publish takes them all.
    matrix = ((measure.get("strategy") or {}).get("matrix") or {}).get("include") or []
    runners = {str(entry.get("runner")) for entry in matrix if isinstance(entry, dict)}
    check(measure.get("runs-on") == "${{ matrix.runner }}" and {"ubuntu-latest", "ubuntu-24.04-arm"} <= runners, path,
          "job measure must run on a matrix of an x86-64 runner (ubuntu-latest) and an arm64 one (ubuntu-24.04-arm)")
    check((measure.get("strategy") or {}).get("fail-fast") is False, path,
          "job measure's matrix must not be fail-fast (a failing machine must not cancel the other's points)")
    uploads = [step.get("with") or {} for step in measure.get("steps") or []
               if str(step.get("uses", "")).startswith("actions/upload-artifact@")]
    check(all("${{ matrix.arch }}" in str(upload.get("name", "")) for upload in uploads), path,
          "job measure's artifact must be named after its machine (${{ matrix.arch }}), or the machines' would clash")

    check(any(u.startswith("actions/download-artifact@") for u in uses_of(publish)), path,
          "job publish does not take the new points (actions/download-artifact)")
    check("tools/ci/publish_points.sh" in runs_of(publish), path, "job publish does not run tools/ci/publish_points.sh")
    check("needs.measure.outputs.points" in str(publish.get("if", "")), path,
          "job publish must run only when points were handed over (needs.measure.outputs.points)")
    check((publish.get("env") or {}).get("HEAPLINE_NEW_POINTS"), path, "job publish must set HEAPLINE_NEW_POINTS")
    downloads = [step.get("with") or {} for step in publish.get("steps") or []
                 if str(step.get("uses", "")).startswith("actions/download-artifact@")]
    check(any(download.get("pattern") == "new-points-*" and not download.get("merge-multiple") for download in downloads),
          path, "job publish must take every machine's points (pattern: new-points-*, each in a folder of its own)")
    check(set(runs_of(publish).split()) <= {"tools/ci/checkout_store.sh", "tools/ci/publish_points.sh"}, path,
          "job publish may run tools/ci/checkout_store.sh and tools/ci/publish_points.sh only")

    for script in ("tools/ci/checkout_store.sh", "heapline-bench validate", "tools/ci/build_site.sh"):
        check(script in runs_of(site), path, f"job site does not run {script}")
    # The docs' release table is the newest release's own report.
    site_runs = runs_of(site)
    check(0 <= site_runs.find("tools/ci/fetch_release_comparison.py") < site_runs.find("tools/ci/build_site.sh"), path,
          "job site must take the latest release's comparison (tools/ci/fetch_release_comparison.py) before it "
          "builds the docs")
    check((site.get("env") or {}).get("HEAPLINE_STORE_OFFLINE") == "1", path, "job site must read the store offline")
    check(any(u.startswith("actions/upload-pages-artifact@") for u in uses_of(site)), path,
          "job site does not upload the site (actions/upload-pages-artifact)")

    # The deployment, and one step that only says, on failure, what a
    # repository whose Pages are off must set once: nothing else.
    def says_the_pages_setting(step):
        script = str(step.get("run", ""))
        return (step.get("if") == "failure()" and "uses" not in step and PAGES_SETTING in script and
                set(re.findall(r"^\s*(\S+)", script, re.M)) <= {"echo", "exit"})
    deploy_steps = deploy.get("steps") or []
    deploys = [s for s in deploy_steps if str(s.get("uses", "")).startswith("actions/deploy-pages@")]
    check(len(deploys) == 1 and all(s in deploys or says_the_pages_setting(s) for s in deploy_steps), path,
          "job deploy must run actions/deploy-pages and nothing else (but one step that, on failure, says the "
          "one-time Pages setting)")
    check(any(says_the_pages_setting(s) for s in deploy_steps), path,
          f"job deploy must say on failure what a repository whose Pages are off sets once ({PAGES_SETTING})")
    check((deploy.get("environment") or {}).get("name") == "github-pages", path,
          "job deploy must deploy to the github-pages environment")
    checkouts = [step for _, step in steps(workflow) if str(step.get("uses", "")).startswith("actions/checkout@")]
    check(checkouts and all((s.get("with") or {}).get("fetch-depth") == 0 for s in checkouts), path,
          "main must be checked out with fetch-depth: 0 (the commit range and the bench-data branch need it)")


def pull_request_rules(path, workflow):
    on = triggers(workflow)
    check(set(on) == {"pull_request"}, path, f"must run on pull_request only, not {sorted(on)}")
    # A docs-only change measures nothing; nothing that builds the library,
    # the scenarios or the harness may be filtered out.
    ignored = (on.get("pull_request") or {}).get("paths-ignore") or []
    check("docs/**" in ignored, path, "must not measure a docs-only change (paths-ignore: docs/**)")
    for measured in ("interposer/", "scenarios/", "harness/", "common/", "bench/", "tools/", "CMakeLists.txt"):
        check(not any(pattern.startswith(measured) or pattern in ("**", "*") for pattern in ignored), path,
              f"paths-ignore must not filter out {measured}, which the figures depend on")
    jobs = workflow.get("jobs") or {}
    check(len(jobs) == 1, path, f"must compare in one job, not {sorted(jobs)}")
    for job_name, job in jobs.items():
        check(job_permissions(job) in ({}, {"contents": "read"}), path,
              f"job {job_name} must hold a read-only token, not {job_permissions(job)}")
        check("tools/ci/compare_pull_request.sh \"$HEAPLINE_BASE_SHA\"" in runs_of(job), path,
              f"job {job_name} does not run tools/ci/compare_pull_request.sh \"$HEAPLINE_BASE_SHA\"")
        # The script fails on an instruction regression: that must fail the
        # check, so nothing may swallow its status.
        check(not job.get("continue-on-error") and
              not any(s.get("continue-on-error") for s in job.get("steps") or []) and
              "|| true" not in runs_of(job), path,
              f"job {job_name} must fail when compare_pull_request.sh fails (no continue-on-error, no || true)")
        check((job.get("env") or {}).get("HEAPLINE_BASE_SHA") == "${{ github.event.pull_request.base.sha }}", path,
              f"job {job_name} must pass the base's commit as HEAPLINE_BASE_SHA")
        checkouts = [s for s in job.get("steps") or [] if str(s.get("uses", "")).startswith("actions/checkout@")]
        check(checkouts and all((s.get("with") or {}).get("fetch-depth") == 0 for s in checkouts), path,
              f"job {job_name} must check out with fetch-depth: 0 (the base's commit must be there)")
        # Whatever its permissions: the pull request's code runs here.
        check(all((s.get("with") or {}).get("persist-credentials") is False for s in checkouts), path,
              f"job {job_name}: checkout must not keep the token (persist-credentials: false)")


RELEASE_TAGS = ["v[0-9]+.[0-9]+.[0-9]+"]


def release_rules(path, workflow):
    on = triggers(workflow)
    check(set(on) == {"push"} and (on.get("push") or {}) == {"tags": RELEASE_TAGS}, path,
          f"must run on a pushed release tag only (push: tags: {RELEASE_TAGS}), not {on}")
    check((workflow.get("concurrency") or {}).get("cancel-in-progress") is False, path,
          "a release run must never be cancelled half-way (cancel-in-progress: false)")
    jobs = workflow.get("jobs") or {}
    check(set(jobs) == {"package", "publish"}, path, f"the jobs must be package and publish, not {sorted(jobs)}")
    if set(jobs) != {"package", "publish"}:
        return
    package, publish = jobs["package"], jobs["publish"]
    check(job_permissions(package) == {"contents": "read"}, path,
          f"job package's permissions must be exactly {{'contents': 'read'}}, not {job_permissions(package)}")
    check(job_permissions(publish) == {"contents": "write"}, path,
          f"job publish's permissions must be exactly {{'contents': 'write'}}, not {job_permissions(publish)}")
    check(publish.get("needs") == "package", path, "job publish must run after package (needs: package)")
    for job_name, job in jobs.items():
        check((job.get("env") or {}).get("HEAPLINE_TAG") == "${{ github.ref_name }}", path,
              f"job {job_name} must pass the tag as HEAPLINE_TAG (${{{{ github.ref_name }}}})")
        for step in job.get("steps") or []:
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                # The publishing job talks to GitHub through gh's GH_TOKEN.
                check((step.get("with") or {}).get("persist-credentials") is False, path,
                      f"job {job_name}: checkout must not keep the token (persist-credentials: false)")
    check('tools/ci/build_release.sh "$HEAPLINE_TAG"' in runs_of(package), path,
          "job package does not run tools/ci/build_release.sh \"$HEAPLINE_TAG\"")
    checkouts = [s for s in package.get("steps") or [] if str(s.get("uses", "")).startswith("actions/checkout@")]
    check(checkouts and all((s.get("with") or {}).get("fetch-depth") == 0 for s in checkouts), path,
          "job package must check out with fetch-depth: 0 (the previous release's tag must be there)")
    check(any(u.startswith("actions/upload-artifact@") for u in uses_of(package)), path,
          "job package does not hand the files over (actions/upload-artifact)")
    check(any(u.startswith("actions/download-artifact@") for u in uses_of(publish)), path,
          "job publish does not take the files (actions/download-artifact)")
    check(runs_of(publish).split() == ["tools/ci/publish_release.sh", '"$HEAPLINE_TAG"', "build/release-assets"], path,
          "job publish may run tools/ci/publish_release.sh \"$HEAPLINE_TAG\" build/release-assets only")
    check((publish.get("env") or {}).get("GH_TOKEN") == "${{ github.token }}", path,
          "job publish must give gh the job's token (GH_TOKEN: ${{ github.token }})")


def main():
    source_dir = sys.argv[1]
    workflows = os.path.join(source_dir, ".github", "workflows")
    defaults = ("ci.yml", "performance.yml", "pull-request.yml", "release.yml")
    paths = [sys.argv[2 + i] if len(sys.argv) > 2 + i else os.path.join(workflows, name)
             for i, name in enumerate(defaults)]
    known = {os.path.join(workflows, name) for name in defaults}
    for name in sorted(os.listdir(workflows)):
        full = os.path.join(workflows, name)
        check(full in known, full, "a workflow these rules do not cover: add its rules to workflow_policy.py")
    for path, rules in zip(paths, (ci_rules, performance_rules, pull_request_rules, release_rules)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        workflow = yaml.safe_load(text)
        common_rules(path, text, workflow, source_dir)
        job_rules(path, workflow)
        rules(path, workflow)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("workflow policy: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
