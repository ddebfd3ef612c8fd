#!/usr/bin/env python3
"""The mutant sampler of tools/mutants.sh (tools/mutants.py): each operator
makes the bug it names and nothing that cannot be a one-line bug (text in a
comment or a string, a template's brackets, a declaration dropped); a seed
draws the same mutants every time; stale entries of the list and of the
equivalents are reported."""
import contextlib
import io
import os
import re
import subprocess
import sys
import tempfile
import unittest
import unittest.mock

SOURCE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(SOURCE_DIR, "tools"))
import mutants  # noqa: E402


def mutations(line, previous="  x = 1;"):
    code = mutants.masked_lines([line])[0]
    return mutants.line_mutants(line, code, mutants.masked_lines([previous])[0])


class Operators(unittest.TestCase):
    def test_relational_operators_move_their_boundary_or_flip(self):
        found = mutations("  if (a < b && c >= d && e != f) return;")["relational"]
        self.assertIn("  if (a <= b && c >= d && e != f) return;", found)
        self.assertIn("  if (a < b && c > d && e != f) return;", found)
        self.assertIn("  if (a < b && c >= d && e == f) return;", found)

    def test_templates_shifts_and_arrows_are_not_relational(self):
        found = mutations("  std::vector<int> v = f<2>(x->y << 1);")
        self.assertNotIn("relational", found)

    def test_arithmetic_swaps_and_increments(self):
        found = mutations("  total += a * b - c;")["arithmetic"]
        self.assertEqual(sorted(found), sorted(["  total -= a * b - c;", "  total += a / b - c;",
                                                "  total += a * b + c;"]))
        self.assertEqual(mutations("  ++count;")["arithmetic"], ["  --count;"])

    def test_a_plus_beside_a_string_is_left_alone(self):
        self.assertNotIn("arithmetic", mutations('  name = "a" + rest;'))

    def test_constants_plus_one_minus_one_and_doubled(self):
        found = mutations("  int width = 1'000;")["constant"]
        self.assertEqual(found, ["  int width = 1001;", "  int width = 999;", "  int width = 2000;"])
        self.assertIn("  mask = 0x20u;", mutations("  mask = 0x10u;")["constant"])
        self.assertIn("  mode = 01510;", mutations("  mode = 0644;")["constant"])
        self.assertIn("  ratio = (0.5 * 2);", mutations("  ratio = 0.5;")["constant"])

    def test_nothing_in_comments_strings_or_identifiers(self):
        self.assertEqual(mutations('  const char* s = "a < b + 1 && c";  // x > 2 || y'), {})
        self.assertEqual(mutations("  /* 3 > 2 */"), {})
        self.assertEqual(mutations("#include <cstdint>"), {})
        self.assertEqual(mutations("  static_assert(sizeof(T) == 8);"), {})
        self.assertNotIn("constant", mutations("  std::int64_t x2 = y;"))

    def test_block_comments_span_lines(self):
        lines = ["  /* a comment", "     x = 3 + 4;", "  */ y = 1 < 2;"]
        masked = mutants.masked_lines(lines)
        self.assertEqual(masked[1].strip(), "")
        self.assertEqual(masked[2].strip(), "y = 1 < 2;")

    def test_logical_operators_swap(self):
        self.assertEqual(mutations("  ok = a && b;")["logical"], ["  ok = a || b;"])

    def test_a_condition_is_negated_whole(self):
        self.assertEqual(mutations("  while (n > 0 && f(n)) {")["negated condition"],
                         ["  while (!(n > 0 && f(n))) {"])
        self.assertNotIn("negated condition", mutations("  if (auto p = f(); p) {"))

    def test_only_whole_expression_statements_are_dropped(self):
        self.assertEqual(mutations("    close(fd);")["dropped statement"], ["    ;"])
        self.assertEqual(mutations("    s.count = 0;")["dropped statement"], ["    ;"])
        self.assertNotIn("dropped statement", mutations("    int fd = open(path);"))
        self.assertNotIn("dropped statement", mutations("    return x;"))
        # The end of a statement that began on the line above.
        self.assertNotIn("dropped statement", mutations("        f(x);", previous="  y = g(a) +"))

    def test_returns_change(self):
        self.assertEqual(mutations("  return true;")["changed return"], ["  return false;"])
        self.assertEqual(mutations("  return a < b;")["changed return"], ["  return {};"])
        self.assertNotIn("changed return", mutations("  return {};"))


class Sample(unittest.TestCase):
    def test_a_seed_draws_the_same_mutants_and_another_seed_others(self):
        first, candidates = mutants.sample_mutants(SOURCE_DIR, 40, 7)
        again, _ = mutants.sample_mutants(SOURCE_DIR, 40, 7)
        other, _ = mutants.sample_mutants(SOURCE_DIR, 40, 8)
        self.assertGreater(candidates, 1000)
        self.assertEqual([m.key() for m in first], [m.key() for m in again])
        self.assertNotEqual([m.key() for m in first], [m.key() for m in other])
        self.assertEqual(len({(m.file, m.line) for m in first}), 40, "one mutant per line")

    def test_each_mutant_is_one_changed_line_of_the_three_modules(self):
        for mutant in mutants.sample_mutants(SOURCE_DIR, 200, 3)[0]:
            self.assertIn(mutant.file.split("/")[0], mutants.MODULE_TESTS)
            with open(os.path.join(SOURCE_DIR, mutant.file), encoding="utf-8") as f:
                self.assertEqual(f.read().split("\n")[mutant.line - 1], mutant.original)
            self.assertNotEqual(mutant.mutated, mutant.original)
            self.assertNotIn("\n", mutant.mutated)


class Journal(unittest.TestCase):
    """A run cut short resumes: what was judged is read back, once per tree
    and per selection of tests."""

    def mutant(self, mutated, tests=""):
        return mutants.Mutant("interposer/src/base/config.cpp", 3, "relational", "  if (a < b) x();", mutated, tests=tests)

    def test_verdicts_are_read_back_and_errors_and_torn_lines_are_not(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "journal.tsv")
            journal = mutants.Journal(path)
            journal.record(self.mutant("  if (a <= b) x();"), "killed", ["interposer.unit.A", "launcher.B"])
            journal.record(self.mutant("  if (a > b) x();"), "survived", [])
            journal.record(self.mutant("  if (!(a < b)) x();"), "error", ["ctest failed"])
            with open(path, "a", encoding="utf-8") as f:
                f.write("interposer/src/base/config.cpp\tif (a < b) x();\t;\t\tkilled\tinterposer.unit")  # killed mid-write
            again = mutants.Journal(path)
            self.assertEqual(again.verdict(self.mutant("  if (a <= b) x();")),
                             ("killed", ["interposer.unit.A", "launcher.B"]))
            self.assertEqual(again.verdict(self.mutant("  if (a > b) x();")), ("survived", []))
            self.assertIsNone(again.verdict(self.mutant("  if (!(a < b)) x();")), "an error is judged again")
            self.assertEqual(len(again.known), 2, "the torn last line is not a verdict")
            self.assertFalse(again.baseline_passed(None))

    def test_a_verdict_holds_for_the_bug_and_the_tests_it_met_only(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "journal.tsv")
            mutants.Journal(path).record(self.mutant("  if (a <= b) x();", tests=r"^launcher\."), "survived", [])
            again = mutants.Journal(path)
            self.assertEqual(again.verdict(self.mutant("  if (a <= b) x();", tests=r"^launcher\.")), ("survived", []))
            self.assertIsNone(again.verdict(self.mutant("  if (a <= b) x();", tests=r"^interposer\.")),
                              "the same bug under other tests is judged again")
            self.assertIsNone(again.verdict(self.mutant("  if (a > b) x();", tests=r"^launcher\.")))
            # A journal of the tool before verdicts had their tests: not read as verdicts.
            with open(path, "a", encoding="utf-8") as f:
                f.write("interposer/src/base/config.cpp\tif (a < b) x();\tif (a > b) x();\tkilled\tlauncher.A\n")
            self.assertEqual(len(mutants.Journal(path).known), 1)

    def test_a_passed_baseline_is_remembered_per_selection_of_tests_and_is_no_verdict(self):
        with tempfile.TemporaryDirectory() as scratch:
            path = os.path.join(scratch, "journal.tsv")
            journal = mutants.Journal(path)
            journal.record(self.mutant("  if (a <= b) x();"), "killed", ["interposer.unit.A"])
            self.assertFalse(mutants.Journal(path).baseline_passed(r"(^interposer\.)"))
            journal.record_baseline(r"(^interposer\.)")
            again = mutants.Journal(path)
            self.assertTrue(again.baseline_passed(r"(^interposer\.)"))
            self.assertFalse(again.baseline_passed(r"(^interposer\.)|(^launcher\.)"),
                             "more tests than the baseline ran")
            self.assertFalse(again.baseline_passed(None), "the whole suite")
            self.assertEqual(len(again.known), 1, "the baseline is not a mutant's verdict")
            journal.record_baseline(None)
            self.assertTrue(mutants.Journal(path).baseline_passed(None))
            torn = os.path.join(scratch, "torn.tsv")
            with open(torn, "w", encoding="utf-8") as f:
                f.write("baseline\t\tpassed")  # killed mid-write: not a passed baseline
            self.assertFalse(mutants.Journal(torn).baseline_passed(None))

    def test_each_list_and_each_seed_has_a_run_name_of_its_own(self):
        with tempfile.TemporaryDirectory() as scratch:
            first, second = os.path.join(scratch, "a", "bugs.list"), os.path.join(scratch, "b", "bugs.list")
            self.assertEqual(mutants.run_name(None, first), mutants.run_name(None, first))
            self.assertNotEqual(mutants.run_name(None, first), mutants.run_name(None, second))
            self.assertTrue(mutants.run_name(None, first).startswith("list-bugs-"))
            self.assertEqual(mutants.run_name(7, first), "seed-7")

    def test_the_journal_is_per_source_tree_but_prose(self):
        with tempfile.TemporaryDirectory() as scratch:
            # A clone sharing the checkout's objects: new ones go to the clone.
            repo = os.path.join(scratch, "repo")
            subprocess.run(["git", "clone", "--quiet", "--shared", "--no-checkout", SOURCE_DIR, repo], check=True)

            def git(*args, text_in=None):
                env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
                           GIT_COMMITTER_EMAIL="t@t")
                return subprocess.run(["git", "-C", repo, *args], input=text_in, capture_output=True, text=True,
                                      check=True, env=env).stdout.strip()

            tree = git("rev-parse", "HEAD^{tree}")

            def commit_with(name, text):
                """HEAD's tree with the top-level file `name` holding `text`, committed."""
                blob = git("hash-object", "-w", "--stdin", text_in=text)
                lines = [line for line in git("ls-tree", tree).splitlines() if line.split("\t", 1)[1] != name]
                lines.append(f"100644 blob {blob}\t{name}")
                return git("commit-tree", git("mktree", text_in="\n".join(lines) + "\n"), "-m", "test")

            same = mutants.source_tree(git("rev-parse", "HEAD"), repo)
            self.assertEqual(mutants.source_tree(git("commit-tree", tree, "-m", "again"), repo), same,
                             "a new commit of the same sources")
            self.assertEqual(mutants.source_tree(commit_with("README.md", "prose\n"), repo), same, "prose alone")
            self.assertNotEqual(mutants.source_tree(commit_with("CMakeLists.txt", "# built\n"), repo), same)


class Runs(unittest.TestCase):
    """What a run hands to its scratch trees, and what it keeps of each list."""

    def test_the_tools_settings_never_reach_the_builds_and_tests_it_runs(self):
        with tempfile.TemporaryDirectory() as scratch:
            bin_dir = os.path.join(scratch, "bin")
            os.makedirs(bin_dir)
            # Stand-ins for cmake and ctest that write down their environment.
            for program in ("cmake", "ctest"):
                with open(os.path.join(bin_dir, program), "w", encoding="utf-8") as f:
                    f.write(f"#!/bin/sh\nenv > {scratch}/{program}.env\n")
                os.chmod(os.path.join(bin_dir, program), 0o755)
            settings = {"HEAPLINE_MUTANTS_LIST": "/elsewhere/bugs.list", "HEAPLINE_MUTANTS_EQUIVALENT": "/x",
                        "HEAPLINE_MUTANTS_DIR": scratch, "PATH": bin_dir + os.pathsep + os.environ["PATH"],
                        "HEAPLINE_MUTANTS_TEST_OTHER": "1", "SOME_TEST_SETTING": "kept"}
            with unittest.mock.patch.dict(os.environ, settings):
                worker = mutants.Worker(scratch, 1, "0" * 40, 1)
                os.makedirs(worker.log_dir)
                worker.compile("build")
                status, failed, _ = worker.ctest("mutant-test", r"^launcher\.")
            self.assertEqual((status, failed), (0, []))
            for program in ("cmake", "ctest"):
                with open(os.path.join(scratch, f"{program}.env"), encoding="utf-8") as f:
                    names = [line.split("=", 1)[0] for line in f]
                self.assertEqual([n for n in names if n.startswith("HEAPLINE_MUTANTS_")], [], program)
                self.assertIn("SOME_TEST_SETTING", names, "any other variable is the caller's to give")

    def test_a_second_list_runs_its_own_baseline_and_keeps_the_first_lists_results(self):
        ran = []

        class FakeWorker:
            """A scratch tree that builds nothing: its tests pass, its mutants are killed."""

            def __init__(self, scratch, index, snapshot, jobs):
                pass

            def prepare(self):
                pass

            def compile(self, log_name):
                return True

            def ctest(self, log_name, include=None, exclude=None, stop_on_failure=True, jobs=None):
                ran.append((log_name, include))
                return 0, [], "log"

            def judge(self, mutant, sampled):
                ran.append(("judge", mutant.name))
                return "killed", [f"test.of.{mutant.name}"]

        def run_list(scratch, name, tests):
            list_path = os.path.join(scratch, name, "mutants.list")
            os.makedirs(os.path.dirname(list_path), exist_ok=True)
            with open(list_path, "w", encoding="utf-8") as f:
                f.write(f"{name}_bug\tinterposer/src/base/config.cpp\tsame text\tother text\t{tests}\n")
            env = {"HEAPLINE_MUTANTS_LIST": list_path, "HEAPLINE_MUTANTS_DIR": os.path.join(scratch, "runs")}
            del ran[:]
            with unittest.mock.patch.dict(os.environ, env), \
                    unittest.mock.patch.object(mutants, "Worker", FakeWorker), \
                    unittest.mock.patch.object(mutants, "git_snapshot", lambda: "0" * 40), \
                    unittest.mock.patch.object(mutants, "source_tree", lambda commit: "f" * 40), \
                    unittest.mock.patch.object(sys, "argv", ["mutants.py"]), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(mutants.main(), 0)
            return list(ran), list_path

        with tempfile.TemporaryDirectory() as scratch:
            first_ran, first_list = run_list(scratch, "first", r"^interposer\.")
            self.assertEqual(first_ran, [("baseline", r"(^interposer\.)"), ("judge", "first_bug")])
            second_ran, second_list = run_list(scratch, "second", r"^launcher\.")
            self.assertEqual(second_ran, [("baseline", r"(^launcher\.)"), ("judge", "second_bug")],
                             "the second list's tests pass before its bugs, and its bug meets its own tests")
            again, _ = run_list(scratch, "first", r"^interposer\.")
            self.assertEqual(again, [], "the first list's run resumes: its baseline and its verdict are kept")
            results = {}
            for list_path in (first_list, second_list):
                name = mutants.run_name(None, list_path)
                with open(os.path.join(scratch, "runs", f"results-{name}.tsv"), encoding="utf-8") as f:
                    results[list_path] = f.read().split("\t")[:2]
            self.assertEqual(results, {first_list: ["killed", "first_bug"], second_list: ["killed", "second_bug"]})


class Summary(unittest.TestCase):
    def test_the_kill_rate_is_killed_and_timeout_over_those_and_the_survivors(self):
        found = [mutants.Mutant("a.cpp", 1, "relational", "  x();", "  ;", name=f"m{i}") for i in range(9)]
        verdicts = ["killed", "killed", "timeout", "survived", "not-compiling", "not-compiling", "killed", "survived",
                    "survived"]
        with contextlib.redirect_stdout(io.StringIO()) as out:
            counts = mutants.summarise(found, [(v, []) for v in verdicts], [], 0, "test")
        self.assertEqual(counts, {"killed": 3, "timeout": 1, "survived": 3, "not-compiling": 2})
        self.assertIn("mutants: test: 3 killed, 1 timeout, 3 survived, 2 not-compiling, 0 equivalent", out.getvalue())
        self.assertIn("mutants: kill rate 57% (4/7; a timeout counts as caught", out.getvalue())


class Workers(unittest.TestCase):
    def scratch_trees(self, *arguments):
        made = []

        class FakeWorker:
            def __init__(self, scratch, index, snapshot, jobs):
                made.append(index)

            def prepare(self):
                pass

            def compile(self, log_name):
                return True

            def ctest(self, log_name, include=None, exclude=None, stop_on_failure=True, jobs=None):
                return 0, [], "log"

            def judge(self, mutant, sampled):
                return "killed", ["t"]

        with tempfile.TemporaryDirectory() as scratch:
            list_path = os.path.join(scratch, "bugs.list")
            with open(list_path, "w", encoding="utf-8") as f:
                for i in range(3):
                    f.write(f"bug{i}\tinterposer/src/base/config.cpp\ttext {i}\tother\t^interposer\\.\n")
            env = {"HEAPLINE_MUTANTS_LIST": list_path, "HEAPLINE_MUTANTS_DIR": os.path.join(scratch, "runs")}
            with unittest.mock.patch.dict(os.environ, env), \
                    unittest.mock.patch.object(mutants, "Worker", FakeWorker), \
                    unittest.mock.patch.object(mutants, "git_snapshot", lambda: "0" * 40), \
                    unittest.mock.patch.object(mutants, "source_tree", lambda commit: "f" * 40), \
                    unittest.mock.patch.object(sys, "argv", ["mutants.py", *arguments]), \
                    contextlib.redirect_stdout(io.StringIO()):
                self.assertEqual(mutants.main(), 0)
        return made

    def test_one_scratch_tree_by_default_and_one_per_job(self):
        self.assertEqual(self.scratch_trees(), [1])
        self.assertEqual(self.scratch_trees("-j", "2"), [1, 2])
        self.assertEqual(self.scratch_trees("-j", "5"), [1, 2, 3], "no more trees than mutants")


class Rounds(unittest.TestCase):
    NAMES = ["interposer.unit.Os.A", "interposer.regions.B", "interposer.Interposer.C", "launcher.D",
             "scenarios.E", "fuzz.F", "harness.G.H", "harness.check_end_to_end.i", "docs.j", "tree.k",
             "ci.real_suite", "ci.publish.real_validate", "ci.workflow_lint", "tools.mutants", "tools.test_script"]

    @staticmethod
    def selected(include, exclude, names):
        # CMake's regular expressions and Python's agree on what ctest_regex lets through.
        return [n for n in names if (include is None or re.search(include, n))
                and (exclude is None or not re.search(exclude, n))]

    def test_a_sampled_mutant_meets_every_test_that_runs_the_build_once_and_no_other(self):
        for module in mutants.MODULE_TESTS:
            with self.subTest(module=module):
                ran = []
                for include, exclude in mutants.sample_rounds(module):
                    ran += self.selected(include, exclude, self.NAMES)
                self.assertEqual(sorted(ran), sorted(n for n in self.NAMES
                                                     if n not in ("ci.workflow_lint", "tools.mutants",
                                                                  "tools.test_script")))

    def test_a_pattern_ctest_cannot_read_is_refused(self):
        for pattern in [r"^ci\.(?!real_suite$)", r"(?:^a)", r"^a\d+", r"\bword"]:
            with self.subTest(pattern=pattern):
                with self.assertRaises(ValueError):
                    mutants.ctest_regex(pattern)
        self.assertEqual(mutants.ctest_regex(r"^a\.", r"^b[0-9]+$"), r"^a\.|^b[0-9]+$")


class Check(unittest.TestCase):
    def check(self, list_text, equivalents_text, *arguments):
        with tempfile.TemporaryDirectory() as scratch:
            list_path, equivalents_path = os.path.join(scratch, "list"), os.path.join(scratch, "equivalent")
            with open(list_path, "w", encoding="utf-8") as f:
                f.write(list_text)
            with open(equivalents_path, "w", encoding="utf-8") as f:
                f.write(equivalents_text)
            env = dict(os.environ, HEAPLINE_MUTANTS_LIST=list_path, HEAPLINE_MUTANTS_EQUIVALENT=equivalents_path)
            return subprocess.run([os.path.join(SOURCE_DIR, "tools", "mutants.sh"), *arguments], env=env,
                                  capture_output=True, text=True)

    def test_the_repository_list_and_equivalents_are_current(self):
        # The repository's files whatever the caller's settings (a run of
        # another list must not have this test check that list).
        env = {name: value for name, value in os.environ.items() if not name.startswith("HEAPLINE_MUTANTS_")}
        result = subprocess.run([os.path.join(SOURCE_DIR, "tools", "mutants.sh"), "--check"],
                                capture_output=True, text=True, env=env)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def current_entry(self):
        """A line of the repository's list whose text is in its file once."""
        for mutant in mutants.read_list(os.path.join(SOURCE_DIR, "tools", "mutants.list"), None):
            with open(os.path.join(SOURCE_DIR, mutant.file), encoding="utf-8") as f:
                once = f.read().count(mutant.original) == 1
            if once:
                return "\t".join([mutant.name, mutant.file, mutant.original, mutant.mutated, mutant.tests]) + "\n"
        self.fail("no current entry in tools/mutants.list")

    def test_a_dry_run_names_a_stale_entry_and_fails_as_check_does(self):
        stale = "gone\tinterposer/src/base/config.cpp\tno such text\tx\t^interposer\\.\n"
        result = self.check(self.current_entry() + stale, "", "--dry-run")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("gone: its original text is in interposer/src/base/config.cpp 0 times, not once", result.stdout)
        current = self.check(self.current_entry(), "", "--dry-run")
        self.assertEqual(current.returncode, 0, current.stdout + current.stderr)
        # Only the bugs the run would meet: NAME_REGEX leaves the stale one out.
        chosen = self.check(self.current_entry() + stale, "", "--dry-run", self.current_entry().split("\t")[0])
        self.assertEqual(chosen.returncode, 0, chosen.stdout + chosen.stderr)

    def test_a_sample_dry_run_names_a_stale_equivalent_and_fails(self):
        result = self.check("", "launcher/src/live_view.cpp\tno such line;\t;\tsome reason\n",
                            "--sample", "2", "--seed", "1", "--dry-run")
        self.assertEqual(result.returncode, 1, result.stdout + result.stderr)
        self.assertIn("no line `no such line;` in launcher/src/live_view.cpp", result.stdout)

    def test_a_moved_line_is_reported_stale(self):
        result = self.check("gone\tinterposer/src/base/config.cpp\tno such text\tx\t^interposer\\.\n",
                            "launcher/src/live_view.cpp\tno such line;\t;\tsome reason\n", "--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("gone: its original text is in interposer/src/base/config.cpp 0 times, not once", result.stdout)
        self.assertIn("no line `no such line;` in launcher/src/live_view.cpp", result.stdout)

    def test_a_list_entry_whose_tests_ctest_cannot_select_is_named(self):
        result = self.check("lookahead\tinterposer/src/base/config.cpp\tno such text\tx\t^interposer\\.(?!unit)\n", "",
                            "--check")
        self.assertEqual(result.returncode, 1)
        self.assertIn("lookahead: not a CMake regular expression", result.stdout)

    def test_an_entry_for_one_definition_leaves_the_same_line_elsewhere_alone(self):
        source = ("namespace x {\n\nvoid first(int a) {\n  // why\n  publish(a);\n}\n\n"
                  "int second() {\n  if (a) {\n    publish(a);\n  }\n}\n")
        lines = source.split("\n")
        self.assertEqual(mutants.enclosing_definition(lines, 4), "void first(int a) {")
        self.assertEqual(mutants.enclosing_definition(lines, 9), "int second() {")
        with tempfile.TemporaryDirectory() as root:
            os.makedirs(os.path.join(root, "src"))
            with open(os.path.join(root, "src", "a.cpp"), "w", encoding="utf-8") as f:
                f.write(source)
            equivalents_path = os.path.join(root, "equivalent")
            with open(equivalents_path, "w", encoding="utf-8") as f:
                f.write("src/a.cpp\tpublish(a);\t;\tthe start publishes nothing new\tvoid first(int a) {\n")
            entries = mutants.read_equivalents(equivalents_path)
            in_first = mutants.Mutant("src/a.cpp", 5, "statement", "  publish(a);", "  ;")
            in_second = mutants.Mutant("src/a.cpp", 10, "statement", "    publish(a);", "    ;")
            self.assertEqual(mutants.equivalence_of(in_first, entries, root), "the start publishes nothing new")
            self.assertIsNone(mutants.equivalence_of(in_second, entries, root))
            self.assertEqual(self.stale_equivalents(root, equivalents_path), [])
            # The line moves to another definition: the entry is stale.
            with open(os.path.join(root, "src", "a.cpp"), "w", encoding="utf-8") as f:
                f.write(source.replace("void first(int a) {\n  // why\n  publish(a);\n", "void first(int a) {\n"))
            self.assertEqual(self.stale_equivalents(root, equivalents_path),
                             [f"{equivalents_path}: no line `publish(a);` in `void first(int a) {{` of src/a.cpp any more"])

    def stale_equivalents(self, root, equivalents_path):
        empty_list = os.path.join(root, "list")
        open(empty_list, "w").close()
        return mutants.stale_entries(root, empty_list, equivalents_path)

    def test_a_malformed_line_is_named(self):
        result = self.check("only\ttwo fields\n", "", "--check")
        self.assertNotEqual(result.returncode, 0)
        self.assertIn(":1: expected NAME<TAB>FILE<TAB>ORIGINAL<TAB>REPLACEMENT<TAB>TEST_REGEX", result.stderr)


if __name__ == "__main__":
    unittest.main()
