#!/usr/bin/env python3
"""The JSON reader rule (json_readers.py): the tree reads every JSON
document through heapline/json_document.h, and each way around it is
reported when a file of a small tree takes it."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import json_readers  # noqa: E402
from line_rules import SOURCE_DIR, problems_in_small_tree  # noqa: E402


class Rule(unittest.TestCase):
    def problems_with(self, path, line):
        return problems_in_small_tree(json_readers.problems, path, line, "#include <nlohmann/json.hpp>")

    def test_the_tree_reads_json_through_the_rule(self):
        self.assertEqual(json_readers.problems(SOURCE_DIR), [])

    def test_every_way_around_the_rule_is_reported(self):
        for line in ["auto doc = nlohmann::json::parse(text);", "auto doc = json::parse(text);",
                     "in >> json_value;", "auto doc = nlohmann::json::from_cbor(bytes);",
                     "auto doc = ordered_json::parse(text);", "parser.parse(text).get(doc);",
                     "parser_.load(path).get(doc);"]:
            for path in ("launcher/src/x.cpp", "harness/src/reports/x.cpp", "common/include/heapline/x.h",
                         "interposer/format/x.cpp"):
                found = self.problems_with(path, line)
                self.assertEqual(len(found), 1, (path, line, found))
                self.assertTrue(found[0].startswith(path + ":3: reads JSON without heapline/json_document.h"), found)

    def test_the_rule_and_other_code_are_not(self):
        for line in ['auto doc = heapline::read_json_document(text, path, "a catalogue");',
                     'auto name = heapline::json_field<std::string>(doc, "name");', "app.parse(argc, argv);",
                     "// nlohmann::json::parse(text);"]:
            self.assertEqual(self.problems_with("harness/src/x.cpp", line), [], line)
        self.assertEqual(self.problems_with("common/include/heapline/json_document.h", "json::parse(text);"), [])
        # The library itself (interposer/src) writes JSON, reads none: not this rule's.
        self.assertEqual(self.problems_with("interposer/src/base/x.cpp", "json::parse(text);"), [])


if __name__ == "__main__":
    unittest.main()
