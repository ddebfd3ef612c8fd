#!/usr/bin/env python3
"""The one place of a run's preload and of the default library
(preload_places.py): the tree keeps to it, and a line around it is
reported."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import preload_places  # noqa: E402
from line_rules import SOURCE_DIR, problems_in_small_tree  # noqa: E402


class OnePlace(unittest.TestCase):
    def problems_with(self, path, line):
        return problems_in_small_tree(preload_places.problems, path, line, "#include <string>")

    def test_the_tree_says_each_once(self):
        self.assertEqual(preload_places.problems(SOURCE_DIR), [])

    def test_a_preload_set_by_hand_is_reported(self):
        for line in ['spec.env["LD_PRELOAD"] = library;', 'request.env[ "LD_PRELOAD" ]=a + ":" + b;']:
            for path in ("harness/src/measurement/x.cpp", "harness/src/cli/x.cpp", "launcher/src/x.cpp"):
                found = self.problems_with(path, line)
                self.assertEqual(len(found), 1, (path, line, found))
                self.assertIn("without set_preload", found[0])

    def test_a_library_path_built_by_hand_is_reported(self):
        for line in ['auto p = where.bin_dir + "/libheapline.so";', 'auto p = layout.libraries / "libheapline.so";']:
            for path in ("harness/src/cli/x.cpp", "launcher/src/x.cpp"):
                found = self.problems_with(path, line)
                self.assertEqual(len(found), 1, (path, line, found))
                self.assertIn("without heapline_library", found[0])

    def test_reading_them_and_the_rules_own_files_are_not(self):
        for line in ['if (spec.env.count("LD_PRELOAD")) {}', 'bool same = env["LD_PRELOAD"] == x;',
                     'set_preload(spec.env, {library});', 'say("no libheapline.so at " + path);',
                     '// spec.env["LD_PRELOAD"] = library;']:
            self.assertEqual(self.problems_with("harness/src/cli/x.cpp", line), [], line)
        self.assertEqual(self.problems_with("harness/src/measurement/process_runner.cpp",
                                            'env["LD_PRELOAD"] = preload;'), [])


if __name__ == "__main__":
    unittest.main()
