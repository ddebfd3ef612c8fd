#!/usr/bin/env python3
"""option_limits_test.py BENCH: every bounded option of heapline-bench takes
the limits its --help states and refuses one past each (exit status 2 and
"OPTION: must be ..."), whichever subcommand has it.

The limits are read from each subcommand's --help ("a whole number from 1 to
10000", "a number from 1e-06 to 0.5", "a number above 0, at most 1000"), so
an option added later is checked too. A value taken runs the subcommand no
further than its first refusal of another kind (a library that does not
exist, a store that is empty): its status is then 0 or 1, never 2.
"""
import os
import re
import subprocess
import sys
import tempfile

BENCH = sys.argv[1]
NUMBER = r"(-?[0-9][0-9.e+-]*)"
RANGE = re.compile(r"^\s+(--[\w-]+|RUNS) (?:INT|FLOAT):(?:a whole number from " + NUMBER + " to " + NUMBER +
                   r"|a number from " + NUMBER + " to " + NUMBER + r"|a number above " + NUMBER + ", at most " + NUMBER +
                   r")(?:=\S+)?(?: REQUIRED)?(?:\s|$)", re.M)


def bounded_options(subcommand):
    """[(option, kind, low, high, low included)] from the subcommand's help."""
    text = subprocess.run([BENCH, subcommand, "--help"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200")).stdout
    found = []
    for m in RANGE.finditer(text):
        option = m.group(1)
        if m.group(2) is not None:
            found.append((option, "whole", int(m.group(2)), int(m.group(3)), True))
        elif m.group(4) is not None:
            found.append((option, "number", float(m.group(4)), float(m.group(5)), True))
        else:
            found.append((option, "number", float(m.group(6)), float(m.group(7)), False))
    return found


def main():
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as work:
        store = os.path.join(work, "store")
        os.makedirs(store)
        missing = os.path.join(work, "missing", "libheapline.so")
        base = {
            "overhead": ["overhead", "churn-1t", missing, "10"],
            "suite": ["suite", "--store", store, "--lib", missing],
            "compare": ["compare"],
            "check": ["check", "--store", store],
            "instructions": ["instructions", "--lib", missing],
            "calibrate": ["calibrate", "--store", store, "--lib", missing],
        }

        def command(subcommand, option, value):
            args = list(base[subcommand])
            if option == "RUNS":
                args[3] = value
                return args
            args += [option, value]
            # The rule between two options: --min-history at most --window.
            if option == "--window":
                args += ["--min-history", "2"]
            if option == "--min-history":
                args += ["--window", "10000"]
            return args

        for subcommand in base:
            options = bounded_options(subcommand)
            if not options:
                problems.append(f"{subcommand} --help states no bounded option")
            for option, kind, low, high, low_included in options:
                if kind == "whole":
                    taken, refused = [low, high], [low - 1, high + 1]
                else:
                    past_low = low if not low_included else low - max(abs(low), 1) * 1e-3
                    taken = [high] + ([low] if low_included else [low + max(abs(low), 1) * 1e-6])
                    refused = [past_low, high + max(abs(high), 1) * 1e-6]
                for value, expected in [(v, True) for v in taken] + [(v, False) for v in refused]:
                    text = repr(value) if kind == "number" else str(value)
                    args = command(subcommand, option, text)
                    result = subprocess.run([BENCH, *args], capture_output=True, text=True, timeout=60)
                    checked += 1
                    said = f"{option if option != 'RUNS' else 'RUNS'}: must be"
                    if expected and (result.returncode == 2 or said in result.stderr):
                        problems.append(f"{' '.join(args)}: refused a value within the stated limits: "
                                        f"{result.stderr.strip()}")
                    if not expected and (result.returncode != 2 or said not in result.stderr):
                        problems.append(f"{' '.join(args)}: took a value one past the stated limits "
                                        f"(status {result.returncode}): {result.stderr.strip()[:200]}")
    for problem in problems:
        print(problem)
    print(f"option limits: {checked} values, {len(problems)} problems")
    return 1 if problems or checked < 100 else 0


if __name__ == "__main__":
    sys.exit(main())
