#!/usr/bin/env python3
"""workflow_policy.py SOURCE_DIR [CI.yml PERFORMANCE.yml]

The security and behaviour rules of heapline's two workflows, which a schema
or a linter does not know: least privilege, no expression expanded into a
script, pinned actions, no secrets, and the performance workflow's trigger,
concurrency and main-only guard. Prints one line per broken rule and exits 1
when there is any.
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


def ci_rules(path, workflow):
    on = triggers(workflow)
    check("push" in on and "pull_request" in on, path, "must run on push and pull_request")
    for job_name, job in workflow["jobs"].items():
        check("write" not in str(job.get("permissions", "")), path, f"job {job_name} must not write")
    for job_name, step in steps(workflow):
        if str(step.get("uses", "")).startswith("actions/checkout@"):
            check((step.get("with") or {}).get("persist-credentials") is False, path,
                  f"job {job_name}: checkout must not keep the token (persist-credentials: false)")
    scripts = "\n".join(str(step.get("run", "")) for _, step in steps(workflow))
    for command in ("tools/setup.sh --test", "tools/test.sh", "python3 -m sphinx -W -b html docs docs/_build/html"):
        check(command in scripts, path, f"no step runs `{command}`")
    # docs/ includes _generated/ pages, which exist only once rendered.
    render = scripts.find("heapline-bench render --store")
    check(0 <= render < scripts.find("python3 -m sphinx"), path,
          "the docs are built before `heapline-bench render` writes docs/_generated")


def performance_rules(path, workflow):
    on = triggers(workflow)
    check(set(on) == {"push", "workflow_dispatch"}, path,
          f"must run on push to main and workflow_dispatch only, not {sorted(on)}")
    check((on.get("push") or {}).get("branches") == ["main"], path, "push must be limited to branches: [main]")
    check(workflow.get("concurrency") == {"group": "performance-history", "cancel-in-progress": False}, path,
          "concurrency must be the one group performance-history, without cancel-in-progress")
    writers = []
    for job_name, job in workflow["jobs"].items():
        permissions = job.get("permissions") or {}
        if "write" in str(permissions):
            writers.append(job_name)
            check(permissions == {"contents": "write"}, path,
                  f"job {job_name} may write contents and nothing else, not {permissions}")
        check(job.get("if") == "github.ref == 'refs/heads/main'", path,
              f"job {job_name} must be skipped off main (if: github.ref == 'refs/heads/main')")
    scripts = [str(step.get("run", "")) for _, step in steps(workflow)]
    pushers = [job for job, step in steps(workflow) if "publish_points.sh" in str(step.get("run", ""))]
    check(writers == sorted(set(pushers)) and writers, path,
          f"exactly the job that publishes may write: writers {writers}, publishers {pushers}")
    for script in ("tools/ci/checkout_store.sh", "tools/ci/run_suite.sh", "tools/ci/publish_points.sh",
                   "tools/ci/render_page.sh", "tools/ci/check_regressions.sh", "tools/build.sh"):
        check(any(script in s for s in scripts), path, f"no step runs {script}")
    checkouts = [step for _, step in steps(workflow) if str(step.get("uses", "")).startswith("actions/checkout@")]
    check(checkouts and all((s.get("with") or {}).get("fetch-depth") == 0 for s in checkouts), path,
          "main must be checked out with fetch-depth: 0 (the commit range needs the history)")
    check(any(str(step.get("uses", "")).startswith("actions/upload-artifact@") for _, step in steps(workflow)), path,
          "the page and the points are not uploaded")


def main():
    source_dir = sys.argv[1]
    workflows = os.path.join(source_dir, ".github", "workflows")
    ci_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(workflows, "ci.yml")
    performance_path = sys.argv[3] if len(sys.argv) > 3 else os.path.join(workflows, "performance.yml")
    for path, rules in ((ci_path, ci_rules), (performance_path, performance_rules)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        workflow = yaml.safe_load(text)
        common_rules(path, text, workflow, source_dir)
        rules(path, workflow)
    for problem in problems:
        print(problem)
    if problems:
        return 1
    print("workflow policy: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
