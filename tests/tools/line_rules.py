#!/usr/bin/env python3
"""What the tree's line rules share (printed_lines.py, output_files.py): a
pattern that no line of the programs' sources may match outside the one
place a rule lives, with a list of allowed lines, each with its reason, by
file and the exact text of its line (one that moves or changes is reported
until the list says it again), and a small tree to show that each way
around a rule is reported."""
import os
import sys
import tempfile

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
from cpp_lines import masked_lines  # noqa: E402
from include_layers import sources  # noqa: E402


def lines_breaking(source_dir, dirs, pattern, allowed, what, exempt=()):
    """One "PATH:LINE: WHAT: TEXT" per line of `dirs` (its comments aside:
    tools/cpp_lines.py; its literals kept, where a script's text is) that
    matches `pattern`, outside the files `exempt` and the lines `allowed`."""
    found = []
    for path in sources(source_dir, dirs):
        if path in exempt:
            continue
        with open(os.path.join(source_dir, path), encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
        for number, (line, code) in enumerate(zip(lines, masked_lines(lines, keep_literals=True)), 1):
            if pattern.search(code) and (path, line.strip()) not in allowed:
                found.append(f"{path}:{number}: {what}: {line.strip()}")
    return found


def problems_in_small_tree(problems, path, line, header):
    """problems() of a tree holding one file, `path`, whose function body is `line`."""
    with tempfile.TemporaryDirectory() as tree:
        os.makedirs(os.path.join(tree, os.path.dirname(path)))
        with open(os.path.join(tree, path), "w", encoding="utf-8") as out:
            out.write(header + "\nvoid f(const std::string& path) {\n  " + line + "\n}\n")
        return problems(tree)


def main(problems, argv):
    """The command line of a rule: one line per problem; status 1 if any."""
    found = problems(argv[1] if len(argv) > 1 else SOURCE_DIR)
    for problem in found:
        print(problem)
    return 1 if found else 0
