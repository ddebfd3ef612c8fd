#!/usr/bin/env python3
"""A stand-in for heapline-bench in the tests of tools/ci/: the same command
line for suite, validate, export --format commits and render, without measuring anything, so the
scripts' git and GitHub logic is tested in milliseconds.

suite appends one point per scenario (--only, else those of --catalogue,
default churn-1t and churn-4t)
carrying the --commit and --commit-range it was given; FAKE_SUITE_FAIL=1
makes it record them and exit 1, like a suite in which a scenario failed.
"""
import argparse
import fcntl
import json
import os
import random
import sys
import time
import uuid

REQUIRED = ("schema", "scenario", "commit", "commit_range", "measured_at", "overhead", "interval")


def suite(args):
    first = last = None
    if args.commit_range:
        first, _, last = args.commit_range.partition("..")
        if not first or not last:
            print("heapline-bench: --commit-range must be FIRST..LAST", file=sys.stderr)
            return 2
    if args.only:
        scenarios = args.only.split(",")
    elif args.catalogue:
        with open(args.catalogue, encoding="utf-8") as catalogue:
            scenarios = [scenario["name"] for scenario in json.load(catalogue)["scenarios"]]
    else:
        scenarios = ["churn-1t", "churn-4t"]
    lines = []
    for scenario in scenarios:
        # Two real points never coincide (their raw times differ); neither
        # do two fake ones, even measured in the same second: the overhead,
        # which the real reader compares (it ignores run_id), is drawn.
        overhead = 0.05 + random.randrange(1, 1_000_000) * 1e-9
        point = {
            "schema": 1,
            "scenario": scenario,
            "commit": args.commit,
            "commit_range": {"first": first, "last": last} if first else None,
            "measured_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "overhead": overhead,
            "interval": [overhead - 0.01, overhead + 0.01],
            "run_id": uuid.uuid4().hex,
        }
        lines.append(json.dumps(point) + "\n")
    os.makedirs(args.store, exist_ok=True)
    with open(os.path.join(args.store, "points.jsonl"), "a", encoding="utf-8") as store:
        fcntl.flock(store, fcntl.LOCK_EX)
        store.write("".join(lines))
    print(f"fake suite: {len(lines)} point(s) for {args.commit}", file=sys.stderr)
    return 1 if os.environ.get("FAKE_SUITE_FAIL") == "1" else 0


def validate(args):
    path = os.path.join(args.store, "points.jsonl")
    bad = 0
    with open(path, encoding="utf-8") as store:
        for number, line in enumerate(store, 1):
            try:
                point = json.loads(line)
                if not isinstance(point, dict):
                    raise ValueError("not a JSON object")
                missing = [key for key in REQUIRED if key not in point]
                if missing:
                    raise ValueError("missing " + ", ".join(missing))
            except ValueError as error:
                print(f"{path}:{number}: {error}")
                bad += 1
    return 1 if bad else 0


def export(args):
    """export --format commits: the measured commits, newest first, each once."""
    if args.format != "commits":
        print(f"fake heapline-bench: export --format {args.format} is not faked", file=sys.stderr)
        return 2
    path = os.path.join(args.store, "points.jsonl")
    points = []
    with open(path, encoding="utf-8") as store:
        for number, line in enumerate(store, 1):
            try:
                points.append(json.loads(line))
            except ValueError as error:
                print(f"heapline-bench: the store has unreadable lines (first: {path}:{number}: {error})", file=sys.stderr)
                return 1
    points.sort(key=lambda point: point["measured_at"])
    listed = []
    for point in reversed(points):
        if point.get("commit") and point["commit"] not in listed:
            listed.append(point["commit"])
    print("".join(commit + "\n" for commit in listed), end="")
    return 0


def render(args):
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.store, "points.jsonl"), encoding="utf-8") as store:
        count = sum(1 for _ in store)
    with open(os.path.join(args.out, "performance.md"), "w", encoding="utf-8") as page:
        page.write(f"{count} point(s)\n")
    return 0


def main():
    parser = argparse.ArgumentParser(prog="heapline-bench")
    parser.add_argument("--catalogue")
    commands = parser.add_subparsers(dest="command", required=True)
    s = commands.add_parser("suite")
    s.add_argument("--store", required=True)
    s.add_argument("--commit", required=True)
    s.add_argument("--commit-range")
    s.add_argument("--only")
    s.add_argument("--runs")
    s.add_argument("--scale")
    s.add_argument("--out")
    v = commands.add_parser("validate")
    v.add_argument("--store", required=True)
    e = commands.add_parser("export")
    e.add_argument("--store", required=True)
    e.add_argument("--format", required=True)
    r = commands.add_parser("render")
    r.add_argument("--store", required=True)
    r.add_argument("--out", required=True)
    args = parser.parse_args()
    return {"suite": suite, "validate": validate, "export": export, "render": render}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
