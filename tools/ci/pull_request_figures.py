#!/usr/bin/env python3
"""pull_request_figures.py --catalogue F --bin DIR --source DIR --comparison F
       --lib LABEL=PATH --lib LABEL=PATH [--instructions-scale S] [--valgrind V]

The table a pull request is judged by: for each scenario, what the base's
library and the pull request's cost, on the two figures that resolve a change
of a few points on a shared 2-core runner, where the wall clock does not:

- instructions: the scenario's command (the catalogue's, its operation count
  scaled down) under callgrind with each library preloaded and without any,
  as a relative difference; callgrind counts the same instructions whatever
  else the machine does.
- CPU time: the `cpu_overhead` that `heapline-bench compare` keeps for each
  build (user + sys time, median with the library / median without - 1, per
  round, and the median of the rounds: the rule of the wall-clock figure, on
  CPU time, computed by compare itself so there is one statistics path).

The change is the pull request's figure minus the base's, in percentage
points. Prints a Markdown table; the workflow appends it to the job summary.
"""
import argparse
import json
import os
import re
import subprocess
import sys


def cpu_overhead(result):
    """compare's median over rounds of the cpu figure; None where it kept none."""
    return result.get("cpu_overhead")


def reduced_command(scenario, bin_dir, source_dir, scale):
    argv = [arg.replace("{bin}", bin_dir).replace("{source}", source_dir) for arg in scenario["command"]]
    index = scenario.get("scale_arg", -1)
    if index >= 0:
        argv[index] = str(max(1, round(float(argv[index]) * scale)))
    return argv


def instructions(valgrind, argv, env, library):
    run_env = dict(os.environ, HEAPLINE_OUT="off", **env)
    run_env.pop("LD_PRELOAD", None)
    if library:
        run_env["LD_PRELOAD"] = library
    done = subprocess.run([valgrind, "--tool=callgrind", "--callgrind-out-file=/dev/null", *argv],
                          env=run_env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, check=False)
    counts = re.findall(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not counts:
        raise RuntimeError(f"callgrind failed on {' '.join(argv)} (exit {done.returncode}):\n{done.stderr[-2000:]}")
    return int(counts[-1])


def percent(value):
    return "n/a" if value is None else f"{value * 100:+.2f}%"


def points(value):
    return "n/a" if value is None else f"{value * 100:+.2f}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--catalogue", required=True)
    parser.add_argument("--bin", required=True)
    parser.add_argument("--source", required=True)
    parser.add_argument("--comparison", required=True, help="heapline-bench compare's JSON")
    parser.add_argument("--lib", action="append", required=True, help="LABEL=PATH, base first")
    parser.add_argument("--instructions-scale", type=float, default=0.02)
    parser.add_argument("--valgrind", default="valgrind")
    args = parser.parse_args()
    libs = [tuple(spec.split("=", 1)) for spec in args.lib]
    if len(libs) != 2 or any(len(lib) != 2 for lib in libs):
        parser.error("give exactly two --lib LABEL=PATH, the base's then the pull request's")

    with open(args.catalogue, encoding="utf-8") as f:
        catalogue = {s["name"]: s for s in json.load(f)["scenarios"]}
    with open(args.comparison, encoding="utf-8") as f:
        comparison = json.load(f)

    (base_label, base_lib), (head_label, head_lib) = libs
    rows = []
    for row in comparison["scenarios"]:
        name = row["name"]
        results = {r["build"]: r for r in row["results"]}
        cpu = [cpu_overhead(results[label]) if label in results else None for label in (base_label, head_label)]
        argv = reduced_command(catalogue[name], args.bin, args.source, args.instructions_scale)
        env = catalogue[name].get("env", {})
        none = instructions(args.valgrind, argv, env, None)
        ins = [instructions(args.valgrind, argv, env, lib) / none - 1 for lib in (base_lib, head_lib)]
        delta = lambda pair: None if None in pair else pair[1] - pair[0]  # noqa: E731
        rows.append(f"| `{name}` | {percent(ins[0])} | {percent(ins[1])} | {points(delta(ins))} "
                    f"| {percent(cpu[0])} | {percent(cpu[1])} | {points(delta(cpu))} |")

    print(f"| Scenario | instructions, {base_label} | instructions, {head_label} | change (points) "
          f"| CPU time, {base_label} | CPU time, {head_label} | change (points) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    print("\n".join(rows))
    print()
    print(f"Overhead of each library over the same command without it. Instructions: callgrind, the catalogue's "
          f"operation counts scaled by {args.instructions_scale:g}. CPU time: user + sys of "
          f"`heapline-bench compare`'s runs ({comparison['runs']} interleaved runs per side, median of "
          f"{comparison['rounds']} round(s), operation counts scaled by {comparison.get('scale', 1):g}), on "
          f"{comparison['machine']['description']}.")
    return 0


if __name__ == "__main__":
    sys.exit(main())
