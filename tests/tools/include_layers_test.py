#!/usr/bin/env python3
"""The include rules (include_layers.py): the tree keeps them, and each rule
is reported when a file of a small tree breaks it."""
import os
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import include_layers  # noqa: E402

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# One file per folder a rule speaks of.
SMALL_TREE = [
    "common/include/heapline/splitmix64.h",
    "common/include/heapline/json_document.h",
    "interposer/include/heapline/report_format.h",
    "interposer/include/heapline/report_reader.h",
    "interposer/src/base/config.h",
    "interposer/src/services/heap_sampler.h",
    "interposer/src/accounting/accounting.h",
    "interposer/src/overrides/intercepted_table.h",
    "interposer/format/report_reader.cpp",
    "launcher/src/report_summary.h",
    "harness/include/heapline_bench/text/text.h",
    "harness/include/heapline_bench/measurement/run_figures.h",
    "harness/include/heapline_bench/history/point.h",
    "harness/include/heapline_bench/verdicts/verdict.h",
    "harness/include/heapline_bench/reports/exporter.h",
    "harness/src/cli/commands.h",
    "harness/src/main.cpp",
]
# The build's list of the library's layers, as interposer/CMakeLists.txt says it.
LAYERS_LINE = "set(heapline_interposer_layers base services accounting overrides)\n"


class Rules(unittest.TestCase):
    def problems_with(self, path, include, more=(), layers_line=LAYERS_LINE):
        """The problems of the small tree with `include` added to `path`, and
        each (path, include) of `more`."""
        with tempfile.TemporaryDirectory() as tree:
            added = [(path, include)] + list(more)
            for file in dict.fromkeys(SMALL_TREE + [p for p, _ in added]):
                os.makedirs(os.path.join(tree, os.path.dirname(file)), exist_ok=True)
                with open(os.path.join(tree, file), "a", encoding="utf-8") as out:
                    out.write("".join(i + "\n" for p, i in added if p == file))
            with open(os.path.join(tree, "interposer", "CMakeLists.txt"), "w", encoding="utf-8") as out:
                out.write(layers_line)
            return include_layers.problems(tree)

    def assert_broken(self, path, include, why):
        found = self.problems_with(path, include)
        self.assertEqual(len(found), 1, found)
        self.assertIn(why, found[0])
        self.assertTrue(found[0].startswith(path + ":1: "), found[0])

    def assert_kept(self, path, include):
        self.assertEqual(self.problems_with(path, include), [])

    def test_the_tree_keeps_every_rule(self):
        self.assertEqual(include_layers.problems(SOURCE_DIR), [])

    def test_a_harness_layer_may_not_include_a_higher_one(self):
        self.assert_broken("harness/src/measurement/compare.cpp", '#include "heapline_bench/history/point.h"',
                           "layer measurement/ includes the higher layer history/")
        self.assert_broken("harness/include/heapline_bench/text/text.h",
                           '#include "heapline_bench/measurement/run_figures.h"', "layer text/ includes")
        self.assert_broken("harness/src/verdicts/verdict.cpp", '#include "heapline_bench/reports/exporter.h"',
                           "layer verdicts/ includes the higher layer reports/")
        self.assert_broken("harness/src/reports/render.cpp", '#include "cli/commands.h"',
                           "layer reports/ includes the higher layer cli/")

    def test_a_harness_layer_may_include_itself_and_lower_ones(self):
        self.assert_kept("harness/src/history/point.cpp", '#include "heapline_bench/measurement/run_figures.h"')
        self.assert_kept("harness/src/history/point.cpp", '#include "heapline_bench/history/point.h"')
        self.assert_kept("harness/src/main.cpp", '#include "cli/commands.h"')
        self.assert_kept("harness/src/main.cpp", '#include "heapline_bench/reports/exporter.h"')

    def test_the_interposer_includes_nothing_of_the_programs(self):
        self.assert_broken("interposer/src/base/output.cpp", '#include "report_summary.h"',
                           "the interposer includes nothing of launcher/")
        self.assert_broken("interposer/src/base/output.cpp", '#include "heapline_bench/text/text.h"',
                           "the interposer includes nothing of harness/")
        self.assert_broken("interposer/include/heapline/live_format.h", '#include "config.h"',
                           "a public header of the interposer includes only public headers")
        self.assert_broken("interposer/src/base/output.cpp", '#include "heapline/report_reader.h"',
                           "the library never includes a reader for programs")
        self.assert_kept("interposer/src/base/output.cpp", '#include "heapline/report_format.h"')
        self.assert_kept("interposer/format/report_reader.cpp", '#include "heapline/report_reader.h"')
        self.assert_broken("interposer/src/base/output.cpp", "#include <heapline/json_document.h>",
                           "the library never includes a reader for programs")
        self.assert_kept("interposer/format/report_reader.cpp", "#include <heapline/json_document.h>")

    def test_an_interposer_layer_may_not_include_a_higher_one(self):
        self.assert_broken("interposer/src/base/output.cpp", '#include "accounting.h"',
                           "interposer layer base/ includes the higher layer accounting/")
        self.assert_broken("interposer/src/services/heap_sampler.cpp", '#include "accounting.h"',
                           "interposer layer services/ includes the higher layer accounting/")
        self.assert_broken("interposer/src/accounting/start_up.cpp", '#include "intercepted_table.h"',
                           "interposer layer accounting/ includes the higher layer overrides/")
        self.assert_kept("interposer/src/accounting/start_up.cpp", '#include "heap_sampler.h"')
        self.assert_kept("interposer/src/overrides/alloc_override.cpp", '#include "accounting.h"')
        self.assert_kept("interposer/src/services/heap_sampler.cpp", '#include "config.h"')

    def test_the_interposer_layers_are_the_builds_list(self):
        self.assertEqual(include_layers.interposer_layers(SOURCE_DIR), ["base", "services", "accounting", "overrides"])
        # The order is the build's: listed the other way round, the same
        # include runs up.
        found = self.problems_with("interposer/src/services/heap_sampler.cpp", '#include "accounting.h"',
                                   layers_line="set(heapline_interposer_layers base accounting services overrides)\n")
        self.assertEqual(found, [])
        found = self.problems_with("interposer/src/accounting/sampling.cpp", '#include "heap_sampler.h"',
                                   layers_line="set(heapline_interposer_layers base accounting services overrides)\n")
        self.assertEqual(len(found), 1, found)
        self.assertIn("layer accounting/ includes the higher layer services/", found[0])
        with self.assertRaises(SystemExit) as refused:
            self.problems_with("interposer/src/base/output.cpp", "#include <cstdint>", layers_line="# none\n")
        self.assertIn("the library's layers are listed nowhere", str(refused.exception))

    def test_two_modules_of_one_layer_may_not_include_each_other(self):
        # A source and its header are one module: sampling.cpp with
        # sampling.h, budget.cpp with budget.h.
        found = self.problems_with("interposer/src/accounting/sampling.cpp", '#include "budget.h"',
                                   more=[("interposer/src/accounting/budget.cpp", '#include "sampling.h"'),
                                         ("interposer/src/accounting/sampling.h", ""),
                                         ("interposer/src/accounting/budget.h", "")])
        self.assertEqual(len(found), 1, found)
        self.assertIn("the modules interposer:budget, interposer:sampling include each other", found[0])
        self.assertTrue(found[0].startswith("interposer/src/accounting/budget.cpp:1: #include sampling.h"), found[0])
        # Around a circle of three (headers of the harness under include/).
        found = self.problems_with("harness/src/history/point.cpp", '#include "heapline_bench/history/store.h"',
                                   more=[("harness/src/history/store.cpp", '#include "heapline_bench/history/reader.h"'),
                                         ("harness/src/history/reader.cpp", '#include "heapline_bench/history/point.h"'),
                                         ("harness/include/heapline_bench/history/store.h", ""),
                                         ("harness/include/heapline_bench/history/reader.h", "")])
        self.assertEqual(len(found), 1, found)
        self.assertIn("harness:point, harness:reader, harness:store include each other", found[0])
        # One way is kept; a header beneath both declares what both call.
        self.assertEqual(self.problems_with("interposer/src/accounting/sampling.cpp", '#include "budget.h"',
                                            more=[("interposer/src/accounting/budget.cpp", '#include "slow_paths.h"'),
                                                  ("interposer/src/accounting/sampling.cpp", '#include "slow_paths.h"'),
                                                  ("interposer/src/accounting/slow_paths.h", ""),
                                                  ("interposer/src/accounting/budget.h", "")]), [])

    def test_an_interposer_source_outside_the_layers_is_reported(self):
        self.assert_broken("interposer/src/loose.cpp", '#include "config.h"',
                           "must be in one of its layers' folders")
        self.assert_broken("interposer/src/loose.cpp", "#include <cstdint>",
                           "must be in one of its layers' folders")

    def test_the_programs_include_only_the_public_headers_of_the_interposer(self):
        self.assert_broken("launcher/src/run_command.cpp", '#include "config.h"',
                           "launcher/ includes only the interposer's public headers")
        self.assert_broken("harness/src/measurement/measurement.cpp", "#include <config.h>",
                           "harness/ includes only the interposer's public headers")
        self.assert_broken("launcher/src/run_command.cpp", "#include <heapline_bench/text/text.h>",
                           "launcher/ includes nothing of harness/")
        self.assert_broken("harness/src/cli/main.cpp", '#include "report_summary.h"',
                           "harness/ includes nothing of launcher/")
        self.assert_broken("common/include/heapline/output_file.h", "#include <heapline/report_format.h>",
                           "common/ includes only common/")
        self.assert_kept("launcher/src/run_command.cpp", "#include <heapline/report_reader.h>")
        self.assert_kept("harness/src/measurement/measurement.cpp", "#include <heapline/splitmix64.h>")

    def test_a_quoted_include_of_no_project_file_is_reported(self):
        self.assert_broken("harness/src/cli/main.cpp", '#include "no_such_header.h"', "is no file of the project")
        self.assert_kept("harness/src/cli/main.cpp", "#include <vector>")


if __name__ == "__main__":
    unittest.main()
