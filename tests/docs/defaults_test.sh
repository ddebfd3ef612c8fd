#!/usr/bin/env bash
# defaults_test.sh SOURCE_DIR BENCH
#
# The harness's defaults are written once in C++ (the verdict rule's in
# verdicts/verdict.h, the confidence level in measurement/statistics.h) and
# heapline-bench's --help shows them from there. The docs that state them
# must say the same: docs/regressions.md's table of the rule, and every
# "NN% interval" of the docs and the README. Changing a default fails here
# until the docs say the new value.
set -euo pipefail
source_dir=$1
bench=$2

/usr/bin/python3 - "$source_dir" <(LC_ALL=C "$bench" check --help) <(LC_ALL=C "$bench" overhead --help) <<'PY'
import glob, os, re, sys

source_dir, check_help, overhead_help = sys.argv[1], open(sys.argv[2]).read(), open(sys.argv[3]).read()
problems = []


def default(option):
    """The default --help shows for an option: '--window INT:... =20'."""
    match = re.search(r"^\s*" + re.escape(option) + r" \S+.*=(\S+)\s*$", check_help, re.MULTILINE)
    if not match:
        sys.exit(f"check --help shows no default for {option}:\n{check_help}")
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
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
echo "defaults: the docs say what heapline-bench uses"
