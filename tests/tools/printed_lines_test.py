#!/usr/bin/env python3
"""The door of printed lines (printed_lines.py): the tree goes through it,
and each way around it is reported when a file of a small tree takes it."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import printed_lines  # noqa: E402
from line_rules import SOURCE_DIR, problems_in_small_tree  # noqa: E402


class Door(unittest.TestCase):
    def problems_with(self, path, line):
        return problems_in_small_tree(printed_lines.problems, path, line, "#include <iostream>")

    def test_the_tree_prints_through_the_door(self):
        self.assertEqual(printed_lines.problems(SOURCE_DIR), [])

    def test_every_way_around_the_door_is_reported(self):
        for line in ['std::cerr << "heapline: " << path << "\\n";', "std::cout<<path;", "std::clog << path;",
                     'printf("%s\\n", path.c_str());', 'std::fprintf(stderr, "%s", path.c_str());',
                     "fputs(path.c_str(), stdout);", "std::puts(path.c_str());", 'perror("open");',
                     "write(2, path.data(), path.size());", "::write(STDOUT_FILENO, path.data(), path.size());"]:
            for path in ("launcher/src/x.cpp", "harness/src/cli/x.cpp", "harness/include/heapline_bench/text/x.h"):
                found = self.problems_with(path, line)
                self.assertEqual(len(found), 1, (path, line, found))
                self.assertTrue(found[0].startswith(path + ":3: prints without heapline/say.h"), found)

    def test_the_door_and_other_streams_are_not(self):
        for line in ['say("heapline", "cannot read " + path);', "say_lines(std::cout, path);",
                     'Say(std::cerr) << "render: " << path << "\\n";', "std::ostringstream out; out << path;",
                     "write(fd, path.data(), path.size());", '// std::cerr << "a comment";']:
            self.assertEqual(self.problems_with("launcher/src/x.cpp", line), [], line)

    def test_an_allowed_line_is_allowed_only_where_it_is_listed(self):
        self.assertEqual(self.problems_with("launcher/src/commands/top_command.cpp", "std::cout << std::flush;"), [])
        self.assertEqual(len(self.problems_with("launcher/src/other.cpp", "std::cout << std::flush;")), 1)


if __name__ == "__main__":
    unittest.main()
