#!/usr/bin/env python3
"""check_points.py STORE_DIR

The structural check of a store's points.jsonl that the publishing job runs,
where no heapline-bench is built (that job holds the write token, so it runs
git and this file only). Every line must be a JSON object with what every
point, the oldest included, has: `measured_at` (a string) and `overhead` (a
number); and, when present, an `interval` of two numbers, a `scenario` and a
`commit` that are strings, and a `timing` of "command" or "benchmark". The
full check, `heapline-bench validate`, runs in the job that measured the
points, before they are handed over.

Prints `FILE:LINE: reason` for each bad line, as heapline-bench validate does,
and exits 1 when there is any. A missing file is an empty store.
"""
import json
import math
import os
import sys


def number(value):
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def problem(point):
    if not isinstance(point, dict):
        return "a point must be a JSON object"
    if not isinstance(point.get("measured_at"), str):
        return "no measured_at string"
    if not number(point.get("overhead")):
        return "no overhead number"
    interval = point.get("interval")
    if interval is not None and not (isinstance(interval, list) and len(interval) == 2 and all(map(number, interval))):
        return "interval must be [low, high]"
    for key in ("scenario", "commit"):
        if point.get(key) is not None and not isinstance(point[key], str):
            return f"{key} must be a string"
    if "timing" in point and point["timing"] not in ("command", "benchmark"):
        return 'timing must be "command" or "benchmark"'
    return None


def main():
    path = os.path.join(sys.argv[1], "points.jsonl")
    if not os.path.exists(path):
        return 0
    bad = 0
    with open(path, encoding="utf-8", errors="replace") as store:
        for number_, line in enumerate(store, 1):
            try:
                reason = problem(json.loads(line))
            except ValueError as error:
                reason = f"not JSON ({error})"
            if reason:
                print(f"{path}:{number_}: {reason}")
                bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
