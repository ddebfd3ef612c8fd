#!/usr/bin/env python3
"""The check of stated behaviours (behaviours.py) on sources and rows of its
own: sentences are cut where the docs end them, statements are told from
prose, a row covers a statement only when every figure, option and quoted
text of it is quoted, and each kind of fault is named: a statement without
a row, a quote no longer in its source, a test ctest does not list."""
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import behaviours  # noqa: E402


class Sentences(unittest.TestCase):
    def test_a_paragraph_is_cut_after_its_full_stops_only(self):
        self.assertEqual(behaviours.sentences_of_text(
            "It waits 10 s (e.g. a build). Then `convert` runs, i.e. once.\nThe report is 2.5 KiB. done"),
            ["It waits 10 s (e.g. a build).", "Then `convert` runs, i.e. once.", "The report is 2.5 KiB. done"])

    def test_markdown_gives_paragraphs_items_and_table_rows_but_no_code_or_heading(self):
        text = textwrap.dedent("""\
            # A heading 1

            First line
            goes on. Second one.

            - an item of 3 MiB
            - another

            | name | what |
            |---|---|
            | `--out` | the file |

            ```sh
            heapline --out x -- true
            ```

                B = max(256 KiB, peak / 100)
            """)
        self.assertEqual(behaviours.markdown_sentences(text),
                         ["First line goes on.", "Second one.", "an item of 3 MiB", "another",
                          "| `--out` | the file |", "B = max(256 KiB, peak / 100)"])

    def test_a_help_gives_its_text_and_each_option(self):
        text = textwrap.dedent("""\
            run a command. It writes a report.
            Usage: heapline run [OPTIONS]

            Options:
              -h,--help                   Print this help message and exit
              --follow TEXT:{tree,command}
                                          tree: the default

            Settings: HEAPLINE_X (default 10).
            """)
        self.assertEqual(behaviours.help_units(text),
                         [(False, "run a command."), (False, "It writes a report."),
                          (True, "-h,--help Print this help message and exit"),
                          (True, "--follow TEXT:{tree,command} tree: the default"),
                          (False, "Settings: HEAPLINE_X (default 10).")])

    def test_statements_are_figures_options_settings_quotes_and_rules(self):
        for sentence in ["It waits 10 s.", "With `--out` it writes there.", "HEAPLINE_OUT names it.",
                         'It says "no report".', "A bad value is refused.", "It keeps at most one.",
                         "The default is tree.", "It never waits.", "The largest come first."]:
            self.assertTrue(behaviours.statement(sentence), sentence)
        for sentence in ["The launcher summarises the run.", "Medians are robust against a slow neighbour."]:
            self.assertFalse(behaviours.statement(sentence), sentence)


class Check(unittest.TestCase):
    """behaviours.py end to end, on a source tree, programs and a ctest of
    its own."""

    def run_check(self, readme, rows, tests=("unit.A", "unit.B")):
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "docs"))
            os.makedirs(os.path.join(root, "tests", "docs"))
            os.makedirs(os.path.join(root, "bin"))
            for name, text in [("README.md", readme), ("docs/usage.md", "Plain prose.\n"),
                               ("docs/design.md", "Plain prose.\n"), ("tests/docs/behaviours.txt", rows)]:
                with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                    f.write(text)
            # Programs whose help has one option, and a ctest that lists `tests`.
            for program in ("heapline", "bench"):
                path = os.path.join(root, "bin", program)
                with open(path, "w", encoding="utf-8") as f:
                    f.write("#!/bin/sh\nprintf 'a tool\\n\\nOptions:\\n  --once  print once\\n'\n")
                os.chmod(path, 0o755)
            listing = "".join(f"  Test  #{i}: {name}\n" for i, name in enumerate(tests, 1))
            with open(os.path.join(root, "bin", "ctest"), "w", encoding="utf-8") as f:
                f.write(f"#!/bin/sh\nprintf '{listing}'\n")
            os.chmod(os.path.join(root, "bin", "ctest"), 0o755)
            env = dict(os.environ, PATH=os.path.join(root, "bin") + os.pathsep + os.environ["PATH"])
            return subprocess.run([sys.executable, os.path.join(HERE, "behaviours.py"), root, root,
                                   os.path.join(root, "bin", "heapline"), os.path.join(root, "bin", "bench")],
                                  capture_output=True, text=True, env=env)

    HELPS = "@ heapline --help | heapline-bench --help\n> --once print once\n= unit.B\n\n"

    def test_every_statement_quoted_and_pinned_passes(self):
        result = self.run_check("It waits 10 s and retries twice. Prose.\n",
                                "@ README.md\n> It waits 10 s and retries twice.\n= unit.A\n\n" + self.HELPS)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("behaviours: 3 statements in 5 sources: 3 pinned by 2 tests, 0 exempt, 0 without a test",
                      result.stdout)

    def test_a_statement_without_a_row_is_named_with_a_row_to_fill(self):
        result = self.run_check("It waits 10 s. It retries at most twice.\n",
                                "@ README.md\n> It waits 10 s.\n= unit.A\n\n" + self.HELPS)
        self.assertEqual(result.returncode, 1)
        self.assertIn("@ README.md\n> It retries at most twice.\n= ", result.stdout)

    def test_a_row_must_quote_every_figure_of_its_statement(self):
        result = self.run_check("It waits 10 s, then 20 s.\n",
                                "@ README.md\n> It waits 10 s,\n= unit.A\n\n" + self.HELPS)
        self.assertEqual(result.returncode, 1)
        self.assertIn("# its rows leave out 20", result.stdout)

    def test_a_removed_test_and_a_changed_statement_are_named(self):
        result = self.run_check("It waits 12 s.\n", "@ README.md\n> It waits 10 s.\n= unit.A\n\n" + self.HELPS,
                                tests=("unit.B",))
        self.assertEqual(result.returncode, 1)
        self.assertIn('not in README.md any more: "It waits 10 s."', result.stdout)
        self.assertIn("no test unit.A in ctest -N", result.stdout)

    def test_an_exempt_row_covers_a_span_with_its_reason(self):
        result = self.run_check("Measured 2026-12-01: 5 s. Then 7 s on 3 cores.\n",
                                "@ README.md\n> Measured 2026-12-01: [...] on 3 cores.\n! a measurement\n\n"
                                + self.HELPS)
        self.assertEqual(result.returncode, 0, result.stdout)
        self.assertIn("2 exempt", result.stdout)


if __name__ == "__main__":
    unittest.main()
