#!/usr/bin/env python3
"""Every file the launcher and heapline-bench write goes through one rule,
heapline/output_file.h (OutputFiles, write_output_file,
append_to_output_file): the name checked before the work (a regular file
or none, never through a link, a directory that exists, a name the
filesystem takes), two outputs of one command never the same file, the
bytes written whole to a temporary of their own and renamed into place.
This checks the programs' sources (launcher/, harness/, common/) for any
other way to make or fill a file: a C++ file stream for writing
(std::ofstream, std::fstream), fopen/freopen/fdopen, open(2) or creat(2)
with O_CREAT, O_WRONLY, O_RDWR or O_TRUNC, mkstemp, std::filesystem's copy,
rename and link calls, rename(2), and a gnuplot script that names its
output file other than a temporary of the program's own.
    output_files.py [SOURCE_DIR]   one line per writer outside the rule; status 1 if any

The writers that follow a rule of their own are listed below, each with the
reason, by file and the exact text of its line: one that moves or changes
is reported until the list says it again.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from line_rules import lines_breaking, main  # noqa: E402

PROGRAM_DIRS = ("launcher", "harness", "common")
RULE = "common/include/heapline/output_file.h"
WRITER = re.compile(
    r"\bstd::(o?fstream)\b|\bofstream\b"
    r"|\b(std::)?(fopen|freopen|fdopen|creat|mkstemp|mkostemp|mkstemps)\s*\("
    r"|\bO_(CREAT|WRONLY|RDWR|TRUNC)\b"
    r"|\b(std::)?filesystem::(copy|copy_file|copy_symlink|rename|create_hard_link|create_symlink)\s*\("
    r"|\bfs::(copy|copy_file|copy_symlink|rename|create_hard_link|create_symlink)\s*\("
    r"|\b(std::|::)?rename(at2?)?\s*\("
    r"|set output")

# (file, the line's text, stripped): why it may write outside the rule.
ALLOWED = {
    ("harness/src/history/store.cpp",
     "const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);"):
        "the store's rule: a point kept beside the store is a new file, created exclusively, never through a link",
    ("harness/src/history/store.cpp",
     "fd_ = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);"):
        "the store's rule: the points are appended under a lock to a regular file (checked on the descriptor)",
    ("harness/src/history/store.cpp",
     "const int fd = open(points_path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);"):
        "the store's rule: the store is opened for append to test it, and writes nothing",
    ("harness/src/measurement/process_runner.cpp", "const int fd = mkostemp(path, O_CLOEXEC);"):
        "a measured run's captured output: a file no other process can open (unlinked at once), never a "
        "name a user reads",
    ("launcher/src/child_process.cpp", 'int null = open("/dev/null", O_WRONLY);'):
        "the helper's output goes to /dev/null",
    ("launcher/src/child_process.cpp", 'const int null = open("/dev/null", O_RDWR | O_CLOEXEC);'):
        "the command's standard input is /dev/null",
    ("harness/src/measurement/process_runner.cpp",
     'else posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);'):
        "a measured run's output goes to /dev/null",
    ("launcher/src/timeline_plot.cpp",
     '<< "set output " << gnuplot_string(fs::absolute(output).string()) << "\\n"'):
        "the script draws into the run's own temporary directory (PlotFiles::image); the picture is then "
        "installed by the rule",
    ("harness/src/reports/plot_export.cpp",
     '<< " dynamic noenhanced font \'sans,11\' background rgb \'white\'\\nset output " << gnuplot_string(name + ".svg")'):
        "the script draws into render's own scratch directory; each picture is then installed by the rule",
}


def problems(source_dir):
    return lines_breaking(source_dir, PROGRAM_DIRS, WRITER, ALLOWED, "writes a file without heapline/output_file.h",
                          exempt=(RULE,))


if __name__ == "__main__":
    sys.exit(main(problems, sys.argv))
