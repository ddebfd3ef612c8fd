#!/usr/bin/env python3
"""fuzz_targets_test.py SOURCE_DIR BUILD_DIR: docs/design.md's table of fuzz
targets lists exactly the targets CMake builds (each `fuzz.NAME.corpus`
test of the build, each heapline_add_fuzz_target of tests/fuzz/), and every
module a row names is a file or directory of the tree.
"""
import os
import re
import subprocess
import sys


def table_rows(design):
    """{target: [paths of the module cell]} from the table under the header
    '| Fuzz target |'."""
    rows, inside = {}, False
    for line in design.splitlines():
        if line.startswith("| Fuzz target |"):
            inside = True
            continue
        if inside and not line.startswith("|"):
            break
        if inside and not line.startswith("|---"):
            cells = [cell.strip() for cell in line.strip("|").split("|")]
            target = cells[0].strip("`")
            module = cells[1].split(":")[0]
            paths = re.findall(r"`([^`]+)`", module)
            # "a/b/x.cpp` and `y.cpp": a bare name is in the first path's directory.
            rows[target] = [p if "/" in p else os.path.join(os.path.dirname(paths[0]), p) for p in paths]
    return rows


def main():
    source_dir, build_dir = sys.argv[1:3]
    problems = []
    with open(os.path.join(source_dir, "docs", "design.md"), encoding="utf-8") as f:
        rows = table_rows(f.read())
    if not rows:
        problems.append("docs/design.md has no table of fuzz targets ('| Fuzz target |')")
    with open(os.path.join(source_dir, "tests", "fuzz", "CMakeLists.txt"), encoding="utf-8") as f:
        declared = set(re.findall(r"^\s*heapline_add_fuzz_target\((\w+)", f.read(), re.M))
    listed = subprocess.run(["ctest", "--test-dir", build_dir, "-N", "-L", "fuzz"], capture_output=True, text=True,
                            check=True).stdout
    built = set(re.findall(r"Test\s+#\d+: fuzz\.(\w+)\.corpus", listed))
    for name, targets in (("tests/fuzz/CMakeLists.txt", declared), ("the build's ctest -L fuzz", built)):
        for target in sorted(targets - set(rows)):
            problems.append(f"fuzz target {target} ({name}) is not in docs/design.md's table")
        for target in sorted(set(rows) - targets):
            problems.append(f"docs/design.md's table lists {target}, which {name} does not have")
    for target, paths in sorted(rows.items()):
        if not paths:
            problems.append(f"docs/design.md's row of {target} names no module")
        for path in paths:
            if not os.path.exists(os.path.join(source_dir, path)):
                problems.append(f"docs/design.md's row of {target} names {path}, which is not in the tree")
        if not os.path.exists(os.path.join(source_dir, "tests", "fuzz", f"{target}_fuzz.cc")):
            problems.append(f"no tests/fuzz/{target}_fuzz.cc for the row of {target}")
    for problem in problems:
        print(problem)
    print(f"fuzz targets: {len(rows)} in the table, {len(declared)} declared, {len(built)} built; "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
