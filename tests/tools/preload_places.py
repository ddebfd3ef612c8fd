#!/usr/bin/env python3
"""A run's preload and the default library are each said in one place, so
that every run of heapline-bench preloads what it says and every program
finds libheapline.so where the others do:
  - LD_PRELOAD is set only by set_preload (harness/include/heapline_bench/
    measurement/process_runner.h): an environment entry written anywhere else
    is reported;
  - libheapline.so's path is built only by heapline_library
    (common/include/heapline/install_layout.h): a directory joined to
    "libheapline.so" by hand anywhere else is reported.
    preload_places.py [SOURCE_DIR]   one line per place; status 1 if any
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from line_rules import lines_breaking, main  # noqa: E402

PROGRAM_DIRS = ("launcher", "harness", "common")
PRELOAD_SET = re.compile(r"\[\s*\"LD_PRELOAD\"\s*\]\s*=[^=]")
LIBRARY_PATH = re.compile(r"/\s*\"libheapline\.so\"|\"/libheapline\.so\"")
RULES = {
    PRELOAD_SET: ("harness/src/measurement/process_runner.cpp",
                  "sets LD_PRELOAD without set_preload (measurement/process_runner.h)"),
    LIBRARY_PATH: ("common/include/heapline/install_layout.h",
                   "builds libheapline.so's path without heapline_library (heapline/install_layout.h)"),
}


def problems(source_dir):
    found = []
    for pattern, (rule, what) in RULES.items():
        found += lines_breaking(source_dir, PROGRAM_DIRS, pattern, {}, what, exempt=(rule,))
    return found


if __name__ == "__main__":
    sys.exit(main(problems, sys.argv))
