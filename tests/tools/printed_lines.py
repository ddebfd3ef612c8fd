#!/usr/bin/env python3
"""Every line the launcher and heapline-bench print goes out through one door,
heapline/say.h (say, say_line, say_lines, Say): the text it prints passes
heapline::terminal_line, so that a name holding a newline or an escape
sequence can never forge a line or drive the terminal. This checks the
programs' sources (launcher/, harness/) for any other way to stdout or
stderr: a stream written directly (std::cout <<, std::cerr <<, std::clog
<<), the C functions (printf, fprintf, puts, fputs, perror, ...), a write(2)
to descriptor 1 or 2.
    printed_lines.py [SOURCE_DIR]   one line per direct write; status 1 if any

The few direct writes that are not text from outside are listed below, each
with the reason, by file and the exact text of its line: one that moves or
changes is reported until the list says it again.
"""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from line_rules import lines_breaking, main  # noqa: E402

PROGRAM_DIRS = ("launcher", "harness")
DIRECT = re.compile(
    r"std::(cout|cerr|clog)\s*<<"
    r"|\b(std::)?(printf|fprintf|vfprintf|puts|fputs|putchar|fputc|perror|dprintf)\s*\("
    r"|\b(::)?write\s*\(\s*(STDOUT_FILENO|STDERR_FILENO|1|2)\s*,")

# (file, the line's text, stripped): why it may write directly.
ALLOWED = {
    ("launcher/src/commands/top_command.cpp", 'if (terminal && !once) std::cout << "\\033[H\\033[2J";'):
        "top clears its own screen: the one control sequence it means to send",
    ("launcher/src/commands/top_command.cpp", "std::cout << std::flush;"): "a flush writes no text",
    ("launcher/src/commands/profile_command.cpp", "std::cout << std::flush;"): "a flush writes no text",
    ("harness/src/reports/progress_line.cpp", 'std::fprintf(out_, "\\r\\033[K%s", text.c_str());'):
        "the progress line redraws itself; its text went through terminal_line",
    ("harness/src/reports/progress_line.cpp", 'std::fprintf(out_, "%s\\n", text.c_str());'):
        "the progress line's text went through terminal_line",
    ("harness/src/reports/progress_line.cpp", 'if (drawn_) std::fputs("\\r\\033[K", out_);'):
        "the progress line erases itself",
    ("harness/src/cli/store_commands.cpp", "std::cout << text;"):
        "an export into a pipe or a file is data for a program, written as it is (on a terminal it goes "
        "through say_lines)",
}


def problems(source_dir):
    return lines_breaking(source_dir, PROGRAM_DIRS, DIRECT, ALLOWED, "prints without heapline/say.h")


if __name__ == "__main__":
    sys.exit(main(problems, sys.argv))
