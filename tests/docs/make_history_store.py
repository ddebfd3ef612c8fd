#!/usr/bin/env python3
"""make_history_store.py DIR: a history store as the site shows it after a
while: 30 points of churn-4t over 2 machines and 20 commits, each with its
three figures (wall clock, CPU time, instructions), with a lasting step (a
change point) on the first machine at the 11th commit, from about +170% down
to about +120% in wall clock (and the CPU time and instructions with it);
the second machine measured the last 10 commits, at about +135%. The
figures are fixed (no randomness): the same store every time.
"""
import json
import os
import sys

MACHINES = [
    {"fingerprint": "aaaa00000001", "cpu_model": "AMD EPYC 7763 64-Core Processor", "cores": 4,
     "kernel": "6.8.0-1021-azure", "glibc": "2.36", "compiler": "GNU 12.2.0", "runner_image": "ubuntu24 20250105.1"},
    {"fingerprint": "bbbb00000002", "cpu_model": "Intel(R) Xeon(R) Platinum 8370C CPU @ 2.80GHz", "cores": 4,
     "kernel": "6.8.0-1021-azure", "glibc": "2.36", "compiler": "GNU 12.2.0", "runner_image": "ubuntu24 20250105.1"},
]
# A wobble that repeats: noise without a random generator.
WOBBLE = [0.02, -0.03, 0.01, 0.04, -0.02, 0.0, -0.04, 0.03, -0.01, 0.02]


def point(scenario, commit, day, overhead, machine):
    cpu = overhead * 0.8
    instructions = overhead * 0.1
    return {
        "schema": 2, "scenario": scenario, "commit": commit, "commit_range": None,
        "measured_at": f"2026-10-{day:02d}T12:{machine:02d}:00Z", "overhead": round(overhead, 4),
        "interval": [round(overhead - 0.06, 4), round(overhead + 0.05, 4)], "confidence": 0.95, "runs": 10,
        "median_with_s": 1.0 + overhead, "median_without_s": 1.0, "timing": "command",
        "cpu": {"overhead": round(cpu, 4), "interval": [round(cpu - 0.03, 4), round(cpu + 0.03, 4)]},
        "instructions": {"overhead": round(instructions, 5), "with": 0, "without": 0},
        "heapline_version": "0.5.0", "library": "libheapline.so", "command": "malloc_churn 4 10000000",
        "machine": MACHINES[machine],
    }


def main():
    os.makedirs(sys.argv[1], exist_ok=True)
    lines = []
    for i in range(20):
        commit = f"{i + 1:02x}{'c0ffee' * 6}{i + 1:02x}"[:40]
        level = 1.70 if i < 10 else 1.20
        lines.append(point("churn-4t", commit, i + 1, level + WOBBLE[i % 10], 0))
        if i >= 10:
            lines.append(point("churn-4t", commit, i + 1, 1.35 + WOBBLE[(i + 3) % 10], 1))
    assert len(lines) == 30
    with open(os.path.join(sys.argv[1], "points.jsonl"), "w", encoding="utf-8") as store:
        for line in lines:
            store.write(json.dumps(line) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
