#!/usr/bin/env python3
"""The output rule (output_files.py): the tree writes every file through
heapline/output_file.h, and each way around it is reported when a file of a
small tree takes it."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import output_files  # noqa: E402
from line_rules import SOURCE_DIR, problems_in_small_tree  # noqa: E402


class Rule(unittest.TestCase):
    def problems_with(self, path, line):
        return problems_in_small_tree(output_files.problems, path, line, "#include <fstream>")

    def test_the_tree_writes_through_the_rule(self):
        self.assertEqual(output_files.problems(SOURCE_DIR), [])

    def test_every_way_around_the_rule_is_reported(self):
        for line in ["std::ofstream(path) << text;", "std::ofstream out(path, std::ios::app);",
                     "std::fstream io(path);", 'FILE* f = fopen(path.c_str(), "w");',
                     'std::FILE* f = std::fopen(path.c_str(), "wb");',
                     "int fd = open(path.c_str(), O_WRONLY | O_CREAT, 0644);",
                     "int fd = ::open(path.c_str(), O_RDWR);", "int fd = creat(path.c_str(), 0644);",
                     "std::filesystem::copy_file(from, path);", "fs::copy(from, path);",
                     "std::filesystem::rename(from, path);", "std::rename(from.c_str(), path.c_str());",
                     "::rename(from.c_str(), path.c_str());", "int fd = mkstemp(name);",
                     'script << "set output " << gnuplot_string(path);']:
            for path in ("launcher/src/x.cpp", "harness/src/reports/x.cpp", "common/include/heapline/x.h"):
                found = self.problems_with(path, line)
                self.assertEqual(len(found), 1, (path, line, found))
                self.assertTrue(found[0].startswith(path + ":3: writes a file without heapline/output_file.h"), found)

    def test_readers_and_the_rule_itself_are_not(self):
        for line in ["heapline::write_output_file(path, text);", "outputs.stage(path, text);",
                     "int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);", "std::ifstream in(path);",
                     "// std::ofstream(path) << text;"]:
            self.assertEqual(self.problems_with("launcher/src/x.cpp", line), [], line)
        self.assertEqual(self.problems_with("common/include/heapline/output_file.h", "std::ofstream(path) << t;"), [])

    def test_an_allowed_line_is_allowed_only_where_it_is_listed(self):
        line = 'int null = open("/dev/null", O_WRONLY);'
        self.assertEqual(self.problems_with("launcher/src/child_process.cpp", line), [])
        self.assertEqual(len(self.problems_with("launcher/src/other.cpp", line)), 1)


if __name__ == "__main__":
    unittest.main()
