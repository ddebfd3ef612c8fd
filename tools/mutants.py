#!/usr/bin/env python3
"""The engine of tools/mutants.sh: do the tests fail when the product breaks?

Two sets of one-line bugs ("mutants"), each applied alone to a scratch git
worktree of the current checkout, rebuilt incrementally and tested:

- the regression list, tools/mutants.list: bugs written by hand, each with
  the tests that must catch it;
- a sample: `--sample N --seed S` draws N lines at random among the source
  lines of interposer/, launcher/ and harness/ that an operator applies to,
  and one mutation of each (see OPERATORS), the same N for the same tree and
  seed. Its mutants run the tests of the mutated file's module first, in
  rounds (MODULE_TESTS), and, when all pass, the rest of the suite but the
  tests that run no program of the build (RUNS_NO_BUILT_PROGRAM), then the
  workflows' tests that do (sample_rounds): a survivor has passed every test
  that could catch it. The mutants that
  tools/mutants.equivalent lists (they cannot change what the program
  does) are not run.

Verdicts: killed (a test failed), timeout (a test ran out of time: the bug
was caught, by a hang), survived (every test passed), not-compiling, and for
the list only stale (its original text is not in the file exactly once).
The kill rate is (killed + timeout) / (killed + timeout + survived).
"""
import argparse
import concurrent.futures
import dataclasses
import hashlib
import os
import random
import re
import shlex
import subprocess
import sys
import threading
import time

from cpp_lines import masked_lines

SOURCE_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MUTATED_DIRS = ("interposer", "launcher", "harness")
MUTATED_SUFFIXES = (".c", ".cc", ".cpp", ".h")

# The tests a sampled mutant of each module meets, round after round, the
# quickest and closest first: the module's unit tests, its other tests,
# then the tests that run its code for real (the launcher's tests run
# programs under the library; the fuzz replays and the docs read with the
# launcher's and the harness's readers). Each round stops at the first
# failure; a mutant that passes them all runs the rest of the suite.
# The two tests of the workflows that run the build's own programs; the
# other ci.* tests and tools.* run no program of the build (the workflows'
# scripts with a fake heapline-bench, the linters, this tool's own test,
# which reads the sources' text): no mutant of the C++ can change their
# outcome, so no round runs them.
CI_TESTS_OF_THE_BUILD = r"^ci\.real_suite$|^ci\.publish\.real_validate$"
RUNS_NO_BUILT_PROGRAM = r"^ci\.|^tools\."
MODULE_TESTS = {
    "interposer": (r"^interposer\.(unit|regions)\.", r"^interposer\.", r"^(launcher|scenarios)\."),
    "launcher": (r"^launcher\.", r"^fuzz\."),
    "harness": (r"^harness\.[A-Z]", r"^harness\.|^fuzz\.", r"^docs\.|" + CI_TESTS_OF_THE_BUILD),
}
# Per test, for tests without a TIMEOUT of their own (ctest --timeout).
DEFAULT_TEST_TIMEOUT = 300


# ---------------------------------------------------------------------------
# What each mutant runs: ctest -R/-E patterns.

def ctest_regex(*alternatives):
    """One ctest -R or -E pattern of the alternatives. ctest reads CMake's
    regular expressions, which have no (?...) groups and no \\d, \\w, \\s or
    \\b: given one, -R matches no test and -E leaves every test in, without a
    word (a last round once ran the whole suite again, and this tool's own
    test of the sources' text "killed" mutants). Such a pattern is refused."""
    for pattern in alternatives:
        if re.search(r"\(\?|\\[dDwWsSb]", pattern):
            raise ValueError(f"not a CMake regular expression (ctest would ignore it): {pattern}")
    return "|".join(alternatives)


def sample_rounds(module):
    """(include, exclude) per ctest run of a sampled mutant of `module`: its
    stages, each without the ones before; then the rest of the suite but the
    tests that run no program of the build; then the workflows' tests that
    do, when no stage ran them."""
    stages = MODULE_TESTS[module]
    rounds = [(ctest_regex(stage), ctest_regex(*stages[:i]) or None) for i, stage in enumerate(stages)]
    rounds.append((None, ctest_regex(*stages, RUNS_NO_BUILT_PROGRAM)))
    if not any(CI_TESTS_OF_THE_BUILD in stage for stage in stages):
        rounds.append((CI_TESTS_OF_THE_BUILD, None))
    return rounds


def balanced(code):
    depth = 0
    for c in code:
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


def closing_paren(code, open_at):
    depth = 0
    for i in range(open_at, len(code)):
        if code[i] == "(":
            depth += 1
        elif code[i] == ")":
            depth -= 1
            if depth == 0:
                return i
    return -1


# ---------------------------------------------------------------------------
# The mutation operators. Each takes (line, masked line, previous code line)
# and returns the mutated lines it can make, as (operator, new line).

def replace_at(line, start, end, text):
    return line[:start] + text + line[end:]


# Binary operators are written with a space on each side in heapline's style;
# a template's angle brackets, a pointer's star or a unary minus are not.
RELATIONAL = {"<": "<=", "<=": "<", ">": ">=", ">=": ">", "==": "!=", "!=": "=="}
ARITHMETIC = {"+": "-", "-": "+", "*": "/", "/": "*", "%": "*",
              "+=": "-=", "-=": "+=", "*=": "/=", "/=": "*="}
LOGICAL = {"&&": "||", "||": "&&"}


def binary_operator_mutants(name, table):
    pattern = re.compile(r"(?<=\s)(" + "|".join(re.escape(op) for op in sorted(table, key=len, reverse=True)) +
                         r")(?=\s)")

    def operator(line, code, previous):
        # A + beside a string literal joins strings: any other operator
        # would not compile.
        return [(name, replace_at(line, m.start(), m.end(), table[m.group(1)])) for m in pattern.finditer(code)
                if not (m.group(1) == "+" and ('"' in code[m.start() - 2:m.start()] or '"' in code[m.end():m.end() + 2]))]
    return operator


INCREMENT = re.compile(r"(?<=[\w\])])(\+\+|--)|(\+\+|--)(?=[A-Za-z_(*])")


def increment_mutants(line, code, previous):
    return [("arithmetic", replace_at(line, m.start(), m.end(), "--" if m.group(0) == "++" else "++"))
            for m in INCREMENT.finditer(code)]


INTEGER = re.compile(r"(?<![\w.'])(0[xX][0-9a-fA-F']+|\d[\d']*)([uU]?[lL]{0,2}|[lL]{1,2}[uU])(?![\w.'])")
FLOATING = re.compile(r"(?<![\w.])(\d[\d']*\.\d*(?:[eE][-+]?\d+)?|\d[\d']*[eE][-+]?\d+|\.\d+(?:[eE][-+]?\d+)?)[fF]?(?![\w.])")


def constant_mutants(line, code, previous):
    mutants = []
    for m in INTEGER.finditer(code):
        digits, suffix = m.group(1).replace("'", ""), m.group(2)
        hexadecimal = digits[:2] in ("0x", "0X")
        octal = len(digits) > 1 and digits[0] == "0" and not hexadecimal
        value = int(digits, 16 if hexadecimal else 8 if octal else 10)
        for changed in (value + 1, value - 1, value * 2):
            if changed < 0 or changed == value:
                continue
            text = hex(changed) if hexadecimal else ("0" + format(changed, "o") if octal and changed else str(changed))
            mutants.append(("constant", replace_at(line, m.start(), m.end(), text + suffix)))
    for m in FLOATING.finditer(code):
        literal = line[m.start():m.end()]
        for changed in (f"({literal} + 1)", f"({literal} - 1)", f"({literal} * 2)"):
            mutants.append(("constant", replace_at(line, m.start(), m.end(), changed)))
    return mutants


CONDITION = re.compile(r"\b(if|while)\s*\(")


def negation_mutants(line, code, previous):
    mutants = []
    for m in CONDITION.finditer(code):
        open_at = m.end() - 1
        close_at = closing_paren(code, open_at)
        inside = code[open_at + 1:close_at]
        # An init-statement (if (auto x = ...; cond)) or a declaration as the
        # condition cannot be negated whole.
        if close_at < 0 or ";" in inside or re.match(r"\s*(const\s+)?(auto|bool|int|std::|[A-Z]\w*\s+\w+\s*=)", inside):
            continue
        condition = line[open_at + 1:close_at]
        mutants.append(("negated condition", replace_at(line, open_at + 1, close_at, f"!({condition})")))
    return mutants


EXPRESSION_STATEMENT = re.compile(
    r"^(\*|\+\+|--)?[A-Za-z_][\w:]*(\s*(\.|->)\s*[A-Za-z_]\w*|\[[^\]]*\])*\s*"
    r"(\(|=(?!=)|\+=|-=|\*=|/=|\|=|&=|\^=|<<=|>>=|\+\+|--)")
NOT_A_STATEMENT = re.compile(
    r"^(return|case|default|using|typedef|template|namespace|struct|class|union|enum|extern|static|constexpr|"
    r"inline|const|auto|friend|public|private|protected|if|for|while|switch|do|else|asm|goto)\b")
STARTS_A_STATEMENT = re.compile(r"([;{}:]|^\s*(\}\s*)?(else|(else\s+)?if\s*\(.*\)|for\s*\(.*\)|while\s*\(.*\)))\s*$")


def dropped_statement_mutants(line, code, previous):
    statement = code.strip()
    if not statement.endswith(";") or not balanced(statement) or NOT_A_STATEMENT.match(statement):
        return []
    if not (statement in ("break;", "continue;") or EXPRESSION_STATEMENT.match(statement)):
        return []
    # The line must be a whole statement, not the end of a longer one.
    if previous is not None and not STARTS_A_STATEMENT.search(previous):
        return []
    indent = line[:len(line) - len(line.lstrip())]
    return [("dropped statement", indent + ";")]


RETURN = re.compile(r"^(\s*)return\s+(.+);\s*$")


def return_mutants(line, code, previous):
    m = RETURN.match(code)
    if not m or not balanced(m.group(2)):
        return []
    value = line[m.start(2):m.end(2)].strip()
    if value in ("true", "false"):
        changed = "false" if value == "true" else "true"
    elif value in ("{}", "nullptr", "0"):
        return []
    else:
        changed = "{}"
    return [("changed return", replace_at(line, m.start(2), m.end(2), changed))]


OPERATORS = (
    binary_operator_mutants("relational", RELATIONAL),
    binary_operator_mutants("arithmetic", ARITHMETIC),
    increment_mutants,
    constant_mutants,
    binary_operator_mutants("logical", LOGICAL),
    negation_mutants,
    dropped_statement_mutants,
    return_mutants,
)


def line_mutants(line, code, previous):
    """Every (operator, mutated line) of one line, grouped by operator."""
    if not code.strip() or code.lstrip().startswith("#") or "static_assert" in code:
        return {}
    grouped = {}
    for operator in OPERATORS:
        for name, mutated in operator(line, code, previous):
            if mutated != line and mutated not in grouped.setdefault(name, []):
                grouped[name].append(mutated)
    return {name: found for name, found in grouped.items() if found}


@dataclasses.dataclass
class Mutant:
    file: str         # relative to the checkout
    line: int         # 1-based
    operator: str
    original: str
    mutated: str
    tests: str = ""   # ctest -R of the tests to run first ("" for the module's)
    name: str = ""    # the list's name, or file:line

    def key(self):
        """The bug's text: what an equivalent entry names."""
        return (self.file, self.original.strip(), self.mutated.strip())

    def verdict_key(self):
        """What a verdict depends on: the bug's text and the tests it meets
        (the same bug in two lists with other tests is two verdicts)."""
        return self.key() + (self.tests,)


def source_files(root):
    files = []
    for directory in MUTATED_DIRS:
        for parent, _, names in os.walk(os.path.join(root, directory)):
            files += [os.path.relpath(os.path.join(parent, name), root)
                      for name in names if name.endswith(MUTATED_SUFFIXES)]
    return sorted(files)


def candidate_lines(root):
    """(file, line number, original, {operator: [mutated lines]}) for every
    line some operator applies to, in a fixed order."""
    candidates = []
    for path in source_files(root):
        with open(os.path.join(root, path), encoding="utf-8") as f:
            lines = f.read().split("\n")
        previous = None
        for number, (line, code) in enumerate(zip(lines, masked_lines(lines)), 1):
            mutants = line_mutants(line, code, previous)
            if mutants:
                candidates.append((path, number, line, mutants))
            if code.strip() and not code.lstrip().startswith("#"):
                previous = code
    return candidates


def sample_mutants(root, count, seed):
    """`count` lines drawn without replacement, then for each an operator
    (each operator that applies to the line equally likely) and one of its
    mutations: the same mutants for the same tree and seed."""
    candidates = candidate_lines(root)
    rng = random.Random(seed)
    chosen = rng.sample(range(len(candidates)), min(count, len(candidates)))
    mutants = []
    for index in chosen:
        path, number, line, by_operator = candidates[index]
        operator = rng.choice(sorted(by_operator))
        mutants.append(Mutant(path, number, operator, line, rng.choice(by_operator[operator]),
                              name=f"{path}:{number}"))
    return mutants, len(candidates)


# ---------------------------------------------------------------------------
# The hand-written files: the regression list and the equivalent mutants.

def read_tab_file(path, fields, usage, optional=(), trailing=0):
    """[(line number, fields)] of a tab-separated file ('#' starts a
    comment line) with `fields` fields, the last `trailing` of which may be
    left out; exits naming the line that is not `usage`."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            values = line.split("\t")
            if (not fields - trailing <= len(values) <= fields or
                    not all(values[i] for i in range(len(values)) if i not in optional)):
                sys.exit(f"mutants: {path}:{number}: expected {usage}")
            rows.append((number, values))
    return rows


def read_list(path, only):
    mutants = []
    for _, (name, file, original, replacement, tests) in read_tab_file(
            path, 5, "NAME<TAB>FILE<TAB>ORIGINAL<TAB>REPLACEMENT<TAB>TEST_REGEX", optional=(3,)):
        if not only or re.search(only, name):
            mutants.append(Mutant(file, 0, "list", original, replacement, tests=tests, name=name))
    return mutants


def read_equivalents(path):
    """{(file, original, mutated): [(definition or None, reason)]}, lines
    compared without their leading and trailing blanks. The optional fifth
    field names the definition the line is in (its first line, as
    enclosing_definition gives it): an entry for a line that is equivalent
    in one function and not in another."""
    if not os.path.exists(path):
        return {}
    entries = {}
    for _, values in read_tab_file(path, 5, "FILE<TAB>ORIGINAL LINE<TAB>MUTATED LINE<TAB>WHY IT IS EQUIVALENT"
                                   "[<TAB>THE DEFINITION IT IS IN]", trailing=1):
        file, original, mutated, reason = values[:4]
        definition = values[4].strip() if len(values) == 5 else None
        entries.setdefault((file, original.strip(), mutated.strip()), []).append((definition, reason))
    return entries


def enclosing_definition(lines, index):
    """The first line (stripped) of the definition that lines[index] is in:
    the nearest line above it that starts in the first column and is not a
    brace, a comment, a preprocessor line or a namespace (the project's
    functions start there; its namespaces are not indented)."""
    for i in range(index - 1, -1, -1):
        text = lines[i]
        if not text or text[0].isspace() or text.startswith(("}", "{", "//", "/*", "#", "namespace")):
            continue
        return text.strip()
    return ""


def equivalence_of(mutant, equivalents, root):
    """Why `mutant` is equivalent (an entry of `equivalents`), or None."""
    entries = equivalents.get(mutant.key(), [])
    if not entries:
        return None
    with open(os.path.join(root, mutant.file), encoding="utf-8") as f:
        definition = enclosing_definition(f.read().split("\n"), mutant.line - 1)
    for where, reason in entries:
        if where is None or where == definition:
            return reason
    return None


def stale_entries(root, list_path, equivalents_path):
    """One line per entry of the two files that no longer matches the code
    (or, for the list, whose tests ctest could not select)."""
    return stale_list_entries(root, list_path, read_list(list_path, None)) + stale_equivalents(root, equivalents_path)


def stale_list_entries(root, list_path, entries):
    """One line per bug of `entries` (read from list_path) that no longer
    matches the code, or whose tests ctest could not select."""
    problems = []
    for mutant in entries:
        try:
            ctest_regex(mutant.tests)
        except ValueError as error:
            problems.append(f"{list_path}: {mutant.name}: {error}")
        try:
            with open(os.path.join(root, mutant.file), encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            problems.append(f"{list_path}: {mutant.name}: no file {mutant.file}")
            continue
        count = text.count(mutant.original)
        if count != 1:
            problems.append(f"{list_path}: {mutant.name}: its original text is in {mutant.file} {count} times, not once")
    return problems


def stale_equivalents(root, equivalents_path):
    """One line per entry of the equivalents whose line is no longer in its
    file (or in the definition it names)."""
    problems = []
    for (file, original, _), entries in read_equivalents(equivalents_path).items():
        try:
            with open(os.path.join(root, file), encoding="utf-8") as f:
                lines = f.read().split("\n")
        except FileNotFoundError:
            lines = []
        found = [i for i, line in enumerate(lines) if line.strip() == original]
        for definition, _ in entries:
            if not found:
                problems.append(f"{equivalents_path}: no line `{original}` in {file} any more")
            elif definition is not None and all(enclosing_definition(lines, i) != definition for i in found):
                problems.append(f"{equivalents_path}: no line `{original}` in `{definition}` of {file} any more")
    return problems


# ---------------------------------------------------------------------------
# Running mutants in scratch worktrees.

# The tool's own settings. They say what the tool reads (which list, which
# equivalents, where its scratch trees are), never what a test should: a
# test that inherited HEAPLINE_MUTANTS_LIST ran `--check` on the list being
# run, against the mutated tree, and "killed" a list bug that every other
# test let through.
TOOL_VARIABLE_PREFIX = "HEAPLINE_MUTANTS_"


def tests_environment():
    """The environment of everything the tool runs in a scratch tree (its
    build, its tests): the caller's, without the tool's own settings."""
    return {name: value for name, value in os.environ.items() if not name.startswith(TOOL_VARIABLE_PREFIX)}


def run(command, log, cwd=None):
    with open(log, "w", encoding="utf-8") as out:
        out.write("$ " + shlex.join(command) + "\n")
        out.flush()
        return subprocess.run(command, cwd=cwd, env=tests_environment(), stdout=out,
                              stderr=subprocess.STDOUT).returncode


def failed_tests(log):
    """[(name, reason)] from a ctest log's list of failed tests."""
    failed = []
    with open(log, encoding="utf-8", errors="replace") as f:
        text = f.read()
    section = text.split("The following tests FAILED:", 1)
    if len(section) == 2:
        # "  12 - NAME (Failed)"; a parameterised test's NAME holds blanks.
        for m in re.finditer(r"^\s*\d+ - (.*) \(([^()]*)\)\s*$", section[1], re.M):
            failed.append((m.group(1).split("  #")[0], m.group(2)))
    return failed


class Worker:
    """One scratch worktree of the checkout's snapshot and its build."""

    def __init__(self, scratch, index, snapshot, jobs):
        self.dir = os.path.join(scratch, f"w{index}")
        # build/release, as in a checkout: compilations the same paths away
        # from their sources, which a ccache with a base_dir shares.
        self.build = os.path.join(self.dir, "build", "release")
        self.log_dir = os.path.join(scratch, "logs")
        self.snapshot = snapshot
        self.jobs = jobs
        self.index = index

    def log(self, name):
        return os.path.join(self.log_dir, f"w{self.index}-{name}.log")

    def prepare(self):
        os.makedirs(self.log_dir, exist_ok=True)
        git = ["git", "-C", self.dir]
        if os.path.exists(os.path.join(self.dir, ".git")):
            subprocess.run(git + ["checkout", "--quiet", "--force", "--detach", self.snapshot], check=True)
            subprocess.run(git + ["clean", "--quiet", "-fdx", "--exclude=/build"], check=True)
        else:
            # --force: a scratch directory deleted by hand is still registered.
            subprocess.run(["git", "-C", SOURCE_ROOT, "worktree", "add", "--force", "--quiet", "--detach",
                            self.dir, self.snapshot], check=True)
        if not os.path.exists(os.path.join(self.build, "CMakeCache.txt")):
            if run(["cmake", "-S", self.dir, "-B", self.build, "-DCMAKE_BUILD_TYPE=Release",
                    "-DHEAPLINE_BUILD_BENCHMARKS=OFF"], self.log("configure")) != 0:
                raise RuntimeError(f"the scratch tree does not configure, see {self.log('configure')}")
        if not self.compile("build"):
            raise RuntimeError(f"the unmutated tree does not build, see {self.log('build')}")

    def compile(self, log_name):
        return run(["cmake", "--build", self.build, "--parallel", str(self.jobs)], self.log(log_name)) == 0

    def ctest(self, log_name, include=None, exclude=None, stop_on_failure=True, jobs=None):
        command = ["ctest", "--test-dir", self.build, "--parallel", str(jobs or self.jobs),
                   "--timeout", str(DEFAULT_TEST_TIMEOUT), "--no-tests=ignore"]
        if stop_on_failure:
            command.append("--stop-on-failure")
        if include:
            command += ["-R", include]
        if exclude:
            command += ["-E", exclude]
        log = self.log(log_name)
        # Without the costs of earlier runs, ctest starts the tests in the
        # order they are defined (unit tests first) instead of the longest
        # first: a failure, which ends the run, comes sooner.
        costs = os.path.join(self.build, "Testing", "Temporary", "CTestCostData.txt")
        if stop_on_failure and os.path.exists(costs):
            os.remove(costs)
        status = run(command, log)
        return status, failed_tests(log), log

    def apply(self, mutant):
        """Writes the mutant into the scratch tree; False when its original
        text is not where it should be (a stale list entry)."""
        path = os.path.join(self.dir, mutant.file)
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except FileNotFoundError:
            return False
        if mutant.line:
            lines = text.split("\n")
            if lines[mutant.line - 1] != mutant.original:
                return False
            lines[mutant.line - 1] = mutant.mutated
            text = "\n".join(lines)
        else:
            if text.count(mutant.original) != 1:
                return False
            text = text.replace(mutant.original, mutant.mutated)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return True

    def restore(self, mutant):
        subprocess.run(["git", "-C", self.dir, "checkout", "--quiet", "--", mutant.file], check=False)

    def judge(self, mutant, sampled):
        """(verdict, failing tests) of one mutant."""
        if not self.apply(mutant):
            return "stale", []
        try:
            if not self.compile("mutant-build"):
                # The build runs each GoogleTest program to list its tests:
                # one that fails to start is a test that failed.
                with open(self.log("mutant-build"), encoding="utf-8", errors="replace") as f:
                    listing = re.search(r"Error running test executable\.\s*Path: '([^']*)'\s*Result: ([^\n]*)", f.read())
                if listing:
                    program = os.path.basename(listing.group(1))
                    return ("timeout" if "timeout" in listing.group(2) else "killed"), [f"{program} --gtest_list_tests"]
                return "not-compiling", []
            if sampled:
                rounds = sample_rounds(mutant.file.split("/", 1)[0])
            else:
                rounds = [(ctest_regex(mutant.tests), None)]
            for include, exclude in rounds:
                status, failed, log = self.ctest("mutant-test", include, exclude)
                if not sampled and "No tests were found" in open(log, encoding="utf-8", errors="replace").read():
                    return "no-tests", []
                if status != 0:
                    if not failed:  # ctest itself failed: no verdict can be read
                        raise RuntimeError(f"ctest failed without a failing test, see {log}")
                    verdict = "timeout" if all(reason == "Timeout" for _, reason in failed) else "killed"
                    return verdict, [name for name, _ in failed]
            return "survived", []
        finally:
            self.restore(mutant)


def git_snapshot():
    """The checkout as it is now, uncommitted edits of tracked files included."""
    stash = subprocess.run(["git", "-C", SOURCE_ROOT, "stash", "create"], capture_output=True, text=True,
                           check=True).stdout.strip()
    return stash or subprocess.run(["git", "-C", SOURCE_ROOT, "rev-parse", "HEAD"], capture_output=True, text=True,
                                   check=True).stdout.strip()


# What a verdict does not depend on: prose and the workflows, which no
# test of a mutant builds or runs (the docs tests read docs/ and README.md,
# but only to check what they say, never a mutated line's effect).
NOT_JUDGED = {"docs", "README.md", ".github", ".ci", "bench-data"}


def source_tree(commit, root=SOURCE_ROOT):
    """A name for the sources a verdict depends on: the git trees of the
    commit's top-level entries but NOT_JUDGED, so that a commit of docs
    alone (or a snapshot's new commit of the same sources) keeps an earlier
    run's verdicts."""
    listing = subprocess.run(["git", "-C", root, "ls-tree", commit], capture_output=True, text=True,
                             check=True).stdout
    judged = [line for line in listing.splitlines() if line.split("\t", 1)[-1] not in NOT_JUDGED]
    return hashlib.sha1("\n".join(judged).encode()).hexdigest()


# Verdicts that an earlier run of the same sources may hand on: everything
# but an error (the tool's or the machine's, not the mutant's).
RESUMABLE = ("killed", "timeout", "survived", "not-compiling", "stale", "no-tests")


class Journal:
    """The verdicts of one set of mutants on one source tree, one line per
    mutant as soon as it is judged, so that a run cut short (a session's
    end, a reboot) resumes where it stopped: a mutant is judged once per
    tree and per tests. Lines are the verdict key's fields (the bug's text
    and its tests), the verdict and the failed tests, tab-separated; a torn
    last line (a kill mid-write) is ignored."""

    # The line that says the unmutated tree passed the tests of one pattern
    # ("" for the whole suite): another selection of tests (a NAME_REGEX, a
    # list with other tests) has not passed by it.
    BASELINE = "baseline\t{}\tpassed\n"

    def __init__(self, path):
        self.path = path
        self.known = {}
        self.baselines = set()
        if os.path.exists(path):
            with open(path, encoding="utf-8", errors="replace") as f:
                for line in f:
                    if not line.endswith("\n"):
                        break
                    fields = line.rstrip("\n").split("\t")
                    if len(fields) == 3 and fields[0] == "baseline" and fields[2] == "passed":
                        self.baselines.add(fields[1])
                    elif len(fields) == 6 and fields[4] in RESUMABLE:
                        *key, verdict, failed = fields
                        self.known[tuple(key)] = (verdict, [t for t in failed.split(",") if t])

    def verdict(self, mutant):
        return self.known.get(mutant.verdict_key())

    def baseline_passed(self, pattern):
        return (pattern or "") in self.baselines

    def record_baseline(self, pattern):
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(self.BASELINE.format(pattern or ""))
        self.baselines.add(pattern or "")

    def record(self, mutant, verdict, failed):
        if verdict not in RESUMABLE:
            return
        # One write of one whole line, appended: never a partial record
        # between two whole ones.
        line = "\t".join(list(mutant.verdict_key()) + [verdict, ",".join(failed)]).replace("\n", " ") + "\n"
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(line)


def run_name(sample_seed, list_path):
    """The name of a run's journal and results: a sample's seed, or the
    list's file name and a hash of its absolute path, so that two lists
    (HEAPLINE_MUTANTS_LIST) never share them."""
    if sample_seed is not None:
        return f"seed-{sample_seed}"
    path = os.path.abspath(list_path)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.splitext(os.path.basename(path))[0])
    return f"list-{stem}-{hashlib.sha1(path.encode()).hexdigest()[:8]}"


def duration(seconds):
    seconds = int(seconds)
    return f"{seconds // 3600}h{seconds // 60 % 60:02d}m" if seconds >= 3600 else f"{seconds // 60}m{seconds % 60:02d}s"


def show_lines(mutant, indent="    "):
    return f"{indent}- {mutant.original.strip()}\n{indent}+ {mutant.mutated.strip()}"


def run_mutants(mutants, sampled, args, scratch, journal_name):
    snapshot = git_snapshot()
    os.makedirs(scratch, exist_ok=True)
    journal = Journal(os.path.join(scratch, f"journal-{journal_name}-{source_tree(snapshot)[:16]}.tsv"))
    if args.fresh and os.path.exists(journal.path):
        os.remove(journal.path)
        journal = Journal(journal.path)
    results = [None] * len(mutants)
    for index, mutant in enumerate(mutants):
        results[index] = journal.verdict(mutant)
    resumed = sum(result is not None for result in results)
    if resumed:
        print(f"mutants: {resumed} of {len(mutants)} judged by an earlier run of these sources "
              f"({os.path.relpath(journal.path, scratch)}; --fresh judges them again)", flush=True)
    pending = [i for i, result in enumerate(results) if result is None]
    if not pending:
        return results, 0.0
    workers_count = max(1, min(args.jobs, len(pending)))
    jobs_each = max(1, (os.cpu_count() or 1) // workers_count)
    workers = [Worker(scratch, i + 1, snapshot, jobs_each) for i in range(workers_count)]
    print(f"mutants: building {snapshot[:12]} in {workers_count} scratch tree(s) under {scratch}", flush=True)
    started = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(workers_count) as pool:
        for future in [pool.submit(worker.prepare) for worker in workers]:
            future.result()
    # Every test the mutants may meet passes before any bug is applied, or
    # a kill means nothing: once per source tree and selection of tests (the
    # journal says so), on every core, since no mutant is judged meanwhile.
    baseline = None if sampled else ctest_regex(*(f"({m.tests})" for m in mutants))
    if journal.baseline_passed(baseline):
        print("mutants: the unmutated tree passed these tests in an earlier run of these sources", flush=True)
    else:
        status, failed, log = workers[0].ctest("baseline", baseline, stop_on_failure=False,
                                               jobs=os.cpu_count() or 1)
        if status != 0:
            names = ", ".join(name for name, _ in failed) or "ctest itself"
            sys.exit(f"mutants: the tests fail without any mutant ({names}), see {log}")
        journal.record_baseline(baseline)
        print(f"mutants: the unmutated tree builds and passes its tests ({duration(time.monotonic() - started)})",
              flush=True)

    queue = [(i, mutants[i]) for i in pending]
    lock = threading.Lock()
    done = [resumed]

    def work(worker):
        while True:
            with lock:
                if not queue:
                    return
                index, mutant = queue.pop(0)
            began = time.monotonic()
            try:
                verdict, failed = worker.judge(mutant, sampled)
            except RuntimeError as error:
                verdict, failed = "error", [str(error)]
            seconds = time.monotonic() - began
            with lock:
                results[index] = (verdict, failed)
                journal.record(mutant, verdict, failed)
                done[0] += 1
                where = f"{mutant.name}  {mutant.operator}" if sampled else mutant.name
                detail = f"  ({', '.join(failed[:3])})" if failed else ""
                print(f"[{done[0]:>3}/{len(mutants)}] {verdict:<14} {where}{detail}  {int(seconds)} s", flush=True)
                if verdict == "survived" and sampled:
                    print(show_lines(mutant), flush=True)

    with concurrent.futures.ThreadPoolExecutor(workers_count) as pool:
        for future in [pool.submit(work, worker) for worker in workers]:
            future.result()
    # Leave the builds matching their trees, for the next run.
    for worker in workers:
        worker.compile("build")
    return results, time.monotonic() - started


def summarise(mutants, results, equivalent, elapsed, header):
    counts = {}
    for verdict, _ in results:
        counts[verdict] = counts.get(verdict, 0) + 1
    order = ("killed", "timeout", "survived", "not-compiling", "stale", "no-tests", "error")
    parts = [f"{counts.get(v, 0)} {v}" for v in order if counts.get(v, 0) or v in order[:4]]
    if equivalent is not None:
        parts.append(f"{len(equivalent)} equivalent")
    print(f"mutants: {header}: {', '.join(parts)}, in {duration(elapsed)}")
    caught = counts.get("killed", 0) + counts.get("timeout", 0)
    judged = caught + counts.get("survived", 0)
    if judged:
        print(f"mutants: kill rate {100 * caught / judged:.0f}% ({caught}/{judged}; a timeout counts as caught, "
              "equivalent and not-compiling mutants are left out)")
    survivors = [m for m, (verdict, _) in zip(mutants, results) if verdict == "survived"]
    if survivors and equivalent is not None:
        print("mutants: the survivors (an equivalent one goes into tools/mutants.equivalent, with the reason):")
        for mutant in survivors:
            print(f"  {mutant.file}:{mutant.line}  {mutant.operator}\n{show_lines(mutant)}")
    if equivalent:
        print("mutants: left out as equivalent (tools/mutants.equivalent):")
        for mutant, reason in equivalent:
            print(f"  {mutant.file}:{mutant.line}  {reason}\n{show_lines(mutant)}")
    return counts


def main():
    parser = argparse.ArgumentParser(prog="tools/mutants.sh", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("name_regex", nargs="?", help="run the list's bugs whose name matches")
    parser.add_argument("--sample", type=int, metavar="N", help="draw N mutants at random lines instead")
    parser.add_argument("--seed", type=int, default=1, metavar="S", help="the sample's seed (default 1)")
    parser.add_argument("-j", "--jobs", type=int, default=1, metavar="J",
                        help="mutants run at once, each in its own scratch tree (default 1)")
    parser.add_argument("--dry-run", action="store_true", help="print the mutants, run nothing")
    parser.add_argument("--fresh", action="store_true",
                        help="judge every mutant again, not only those no earlier run of these sources judged")
    parser.add_argument("--check", action="store_true",
                        help="only check that the list and the equivalents still match the code")
    args = parser.parse_args()
    list_path = os.environ.get("HEAPLINE_MUTANTS_LIST", os.path.join(SOURCE_ROOT, "tools", "mutants.list"))
    equivalents_path = os.environ.get("HEAPLINE_MUTANTS_EQUIVALENT",
                                      os.path.join(SOURCE_ROOT, "tools", "mutants.equivalent"))
    scratch = os.environ.get("HEAPLINE_MUTANTS_DIR", os.path.join(SOURCE_ROOT, "build", "mutants"))
    if args.jobs < 1 or (args.sample is not None and args.sample < 1):
        parser.error("N and J must be positive")

    if args.check:
        problems = stale_entries(SOURCE_ROOT, list_path, equivalents_path)
        for problem in problems:
            print(problem)
        if problems:
            return 1
        print("mutants: the list and the equivalents match the code")
        return 0

    equivalent = None
    if args.sample is not None:
        if args.name_regex:
            parser.error("NAME_REGEX selects from the list; --sample draws its own mutants")
        drawn, candidates = sample_mutants(SOURCE_ROOT, args.sample, args.seed)
        equivalents = read_equivalents(equivalents_path)
        equivalent, mutants = [], []
        for mutant in drawn:
            reason = equivalence_of(mutant, equivalents, SOURCE_ROOT)
            if reason is None:
                mutants.append(mutant)
            else:
                equivalent.append((mutant, reason))
        header = f"seed {args.seed}, {len(drawn)} of {candidates} candidate lines"
    else:
        mutants = read_list(list_path, args.name_regex)
        header = f"{len(mutants)} from {os.path.relpath(list_path, SOURCE_ROOT)}"
        if not mutants:
            print(f"mutants: no bug in {list_path} matches '{args.name_regex}'", file=sys.stderr)
            return 2

    if args.dry_run:
        for mutant in mutants:
            print(f"{mutant.name}  {mutant.operator}\n{show_lines(mutant)}")
        for mutant, reason in equivalent or []:
            print(f"{mutant.name}  equivalent: {reason}\n{show_lines(mutant)}")
        # What the run would meet and --check reports: a list's bug that
        # would be judged stale, or an equivalent that no longer names a
        # line (a mutant it should leave out would be run and counted).
        problems = (stale_equivalents(SOURCE_ROOT, equivalents_path) if args.sample is not None
                    else stale_list_entries(SOURCE_ROOT, list_path, mutants))
        for problem in problems:
            print(problem)
        return 1 if problems else 0

    name = run_name(args.seed if args.sample is not None else None, list_path)
    results, elapsed = run_mutants(mutants, args.sample is not None, args, scratch, name)
    counts = summarise(mutants, results, equivalent, elapsed, header)
    with open(os.path.join(scratch, f"results-{name}.tsv"), "w",
              encoding="utf-8") as out:
        for mutant, (verdict, failed) in zip(mutants, results):
            out.write("\t".join([verdict, mutant.name, mutant.operator, mutant.original, mutant.mutated,
                                 ",".join(failed)]) + "\n")
    if args.sample is None:
        return 0 if all(counts.get(v, 0) == 0 for v in ("survived", "stale", "no-tests", "error")) else 1
    return 1 if counts.get("error", 0) else 0


if __name__ == "__main__":
    sys.exit(main())
