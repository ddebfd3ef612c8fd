#!/usr/bin/env bash
# defaults_test.sh SOURCE_DIR BENCH
#
# The harness's defaults are written once in C++ (the verdict rule's in
# verdicts/verdict.h, the confidence level in measurement/statistics.h, the
# comparison's rounds in cli/compare_command.cpp, the runs in
# measurement/measurement.h) and heapline-bench's --help shows them from
# there. The docs that state them must say the same:
# docs/regressions.md's table of the rule, every "NN% interval" of the docs
# and the README, and docs/performance.md's release table, made by a command
# that leaves its rounds and runs to the defaults. Changing a default fails
# here until the docs say the new value.
set -euo pipefail
source_dir=$1
bench=$2

/usr/bin/python3 - "$source_dir" <(LC_ALL=C "$bench" check --help) <(LC_ALL=C "$bench" overhead --help) \
  <(LC_ALL=C "$bench" compare --help) <<'PY'
import glob, json, os, re, sys

source_dir, check_help, overhead_help, compare_help = (sys.argv[1], open(sys.argv[2]).read(),
                                                      open(sys.argv[3]).read(), open(sys.argv[4]).read())
problems = []


def default(option, help_text=check_help):
    """The default --help shows for an option: '--window INT:... =20'."""
    match = re.search(r"^\s*" + re.escape(option) + r" \S+.*=(\S+)\s*$", help_text, re.MULTILINE)
    if not match:
        sys.exit(f"--help shows no default for {option}:\n{help_text}")
    return match.group(1)


def rule_row(quantity):
    text = open(os.path.join(source_dir, "docs/regressions.md"), encoding="utf-8").read()
    match = re.search(r"^\| " + quantity + r" \|.*\| ([^|]*) \|$", text, re.MULTILINE)
    return match.group(1) if match else f"no row '{quantity}' in docs/regressions.md"


expected = {
    "history": default("--window"),
    "threshold": f"`--min-effect` {default('--min-effect')} points; "
                 f"`--min-effect-instructions` {default('--min-effect-instructions')}",
}
for quantity, said in expected.items():
    if rule_row(quantity) != said:
        problems.append(f"docs/regressions.md, row {quantity}: '{rule_row(quantity)}', but heapline-bench says '{said}'")
q_row = rule_row("q")
if f"`--false-alarm-rate` {default('--false-alarm-rate')}," not in q_row:
    problems.append(f"docs/regressions.md, row q: '{q_row}', but --false-alarm-rate is {default('--false-alarm-rate')}")
regressions = open(os.path.join(source_dir, "docs/regressions.md"), encoding="utf-8").read()
if f"`--min-history` ({default('--min-history')})" not in regressions:
    problems.append(f"docs/regressions.md does not say `--min-history` ({default('--min-history')})")

# The confidence level, as --until-ci's help names it.
level = re.search(r"until the (\d+(?:\.\d+)?%) interval", overhead_help)
if not level:
    sys.exit(f"overhead --help names no level for --until-ci:\n{overhead_help}")
level = level.group(1)
docs = sorted(glob.glob(os.path.join(source_dir, "docs/*.md"))) + [os.path.join(source_dir, "README.md")]
for path in docs:
    text = open(path, encoding="utf-8").read()
    for match in re.finditer(r"(\d+(?:\.\d+)?%)\s+(?:confidence\s+)?interval", text):
        if match.group(1) != level:
            line = text.count("\n", 0, match.start()) + 1
            problems.append(f"{os.path.relpath(path, source_dir)}:{line}: '{match.group(0)}', "
                            f"but heapline-bench's intervals are {level}")
# The release table: made with compare's default rounds and runs (its command
# in docs/performance.md gives neither), said in words above the table.
performance = open(os.path.join(source_dir, "docs/performance.md"), encoding="utf-8").read()
comparison = json.load(open(os.path.join(source_dir, "docs/release-comparison.json"), encoding="utf-8"))
rounds, runs = int(default("--rounds", compare_help)), int(default("--runs", compare_help))
command = re.search(r"^tools/compare_releases\.sh .*--write-docs$", performance, re.MULTILINE)
if not command or "--rounds" in command.group(0) or "--runs" in command.group(0):
    problems.append("docs/performance.md: no release-table command that leaves --rounds and --runs to the defaults")
if (comparison["rounds"], comparison["runs"]) != (rounds, runs):
    problems.append(f"docs/release-comparison.json: {comparison['rounds']} rounds of {comparison['runs']} runs, "
                    f"but compare's defaults are {rounds} of {runs}")
words = "zero one two three four five six seven eight nine ten".split()
said = re.search(r"measures in (\w+) rounds that alternate the builds", performance)
if not said or said.group(1) != (words[rounds] if rounds < len(words) else str(rounds)):
    problems.append(f"docs/performance.md: '{said.group(0) if said else 'no measures in N rounds'}', "
                    f"but compare's default is {rounds} rounds")
# What --fail-on-regression fails on, as check --help says it, is what
# docs/regressions.md says: a gated regression, or no gated figure judged at
# all, while verdicts of insufficient history only fail nothing (the help
# said "when none could be judged", and such a check exits 0).
gate_help = re.search(r"^\s*--fail-on-regression\s+(.*(?:\n\s{20,}\S.*)*)", check_help, re.MULTILINE)
gate_help = " ".join(gate_help.group(1).split()) if gate_help else "no --fail-on-regression in check --help"
gate_docs = " ".join(regressions.split())
for case in ("a gated figure of a scenario regressed", "no gated figure was judged at all",
             "verdicts of insufficient history only"):
    if case not in gate_docs:
        problems.append(f"docs/regressions.md no longer says '{case}' of --fail-on-regression: this test quotes it")
if not ("gated figure regressed" in gate_help and "no gated figure could be judged at all" in gate_help
        and "insufficient history only fail nothing" in gate_help):
    problems.append(f"check --help, --fail-on-regression: '{gate_help}', but docs/regressions.md says it fails on a "
                    "gated regression or no gated figure judged at all, and verdicts of insufficient history only "
                    "fail nothing")
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "defaults: the docs say what heapline-bench uses"
