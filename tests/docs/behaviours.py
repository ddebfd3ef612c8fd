#!/usr/bin/env python3
"""Every behaviour the docs and the --help texts state is pinned by a test.

tests/docs/behaviours.txt ties each statement (a quote of its source) to
the ctest tests that fail when it stops being true. This check reads the
sources (README.md, docs/usage.md, docs/design.md, and the --help of
heapline and heapline-bench and of each of their subcommands), cuts them
into sentences, and fails, naming each one:

- a quote that is no longer in its source (the statement changed: tie the
  new text to its tests again);
- a test a row names that ctest does not list (a test removed or renamed
  leaves its statements without one);
- a statement that no row quotes, or whose figures, options, settings or
  quoted texts are not all inside rows' quotes (a sentence that states
  three limits needs a row, or rows, for all three).

A statement is a sentence that gives a figure or a unit, names an option, a
setting or a quoted text, or says what is refused, at most, at least, by
default, exact, never, always, only, first, last or largest (STATEMENT
below), and every item of a --help list (an option, a positional, a
subcommand). A sentence that states nothing a test could hold (a
measurement on a date, the reason for a choice) is a row too: exempt, with
why. Fenced code blocks (commands, example output) and headings are not
sentences.

Usage: behaviours.py SOURCE_DIR BUILD_DIR HEAPLINE HEAPLINE_BENCH [--list]
--list prints every statement with the tests that pin it (the inventory).
"""
import fnmatch
import os
import re
import subprocess
import sys

SOURCES = ("README.md", "docs/usage.md", "docs/design.md")
ROWS = os.path.join("tests", "docs", "behaviours.txt")
# "[...]" inside a quote stands for any text of the source between its two
# sides (a quote that covers a table or a paragraph without copying it).
ELLIPSIS = "[...]"


def normalised(text):
    return re.sub(r"\s+", " ", text).strip()


# ---------------------------------------------------------------------------
# The sources, cut into sentences.

ABBREVIATIONS = ("e.g.", "i.e.", "cf.", "vs.", "etc.")
SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]*]*\s+(?=[A-Z`\"(*\[0-9$~\\-])")


def sentences_of_text(text):
    """The sentences of one paragraph (its lines joined)."""
    text = normalised(text)
    result, start = [], 0
    for m in SENTENCE_END.finditer(text):
        before = text[start:m.start()]
        if before.endswith(ABBREVIATIONS) or re.search(r"\b[A-Z]\.$", before):
            continue
        result.append(text[start:m.end()].strip())
        start = m.end()
    if text[start:].strip():
        result.append(text[start:].strip())
    return result


def markdown_sentences(text):
    """The sentences of a Markdown file: each paragraph's and list item's
    sentences, each table row but the header, each indented block (a
    formula) whole. Fenced code blocks, headings and images are left out."""
    result, paragraph = [], []
    in_fence, table_header = False, True

    def flush():
        if paragraph:
            result.extend(sentences_of_text(" ".join(paragraph)))
            paragraph.clear()

    lines = text.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        if stripped.startswith("```"):
            flush()
            in_fence = not in_fence
        elif in_fence:
            pass
        elif not stripped or stripped.startswith(("#", "![")):
            flush()
            table_header = True
        elif stripped.startswith("|"):
            flush()
            if re.match(r"^\|[\s|:-]+\|$", stripped):
                pass
            elif table_header:
                table_header = False
            else:
                result.append(normalised(stripped))
        elif line.startswith("    ") and not paragraph:
            block = [stripped]
            while i + 1 < len(lines) and lines[i + 1].startswith("    "):
                i += 1
                block.append(lines[i].strip())
            result.append(normalised(" ".join(block)))
        elif re.match(r"^\s*([-*]|\d+\.)\s", line):
            flush()
            paragraph.append(re.sub(r"^\s*([-*]|\d+\.)\s+", "", line))
        else:
            paragraph.append(stripped)
        i += 1
    flush()
    return result


def help_units(text):
    """(is an item, text) of a CLI11 --help: the sentences of its free text
    (the description, a footer) and each item of its lists of options,
    positionals and subcommands with its wrapped description ('  --out TEXT
    report file ...'). The line 'Usage: ...' states nothing of its own."""
    result, paragraph, item = [], [], None
    in_list = False

    def flush():
        nonlocal item
        if item:
            result.append((True, normalised(item)))
            item = None
        if paragraph:
            result.extend((False, sentence) for sentence in sentences_of_text(" ".join(paragraph)))
            paragraph.clear()

    for line in text.split("\n"):
        if not line.strip():
            flush()
            in_list = False
        elif re.match(r"^[A-Z][A-Za-z ]*:$", line):
            flush()
            in_list = True
        elif line.startswith("Usage:"):
            flush()
        elif in_list and re.match(r"^  \S", line):
            flush()
            item = line
        elif in_list and item is not None:
            item += " " + line.strip()
        else:
            in_list = False
            paragraph.append(line)
    flush()
    return result


# ---------------------------------------------------------------------------
# Which sentences state a behaviour, and what in them a row must quote.

# What a test can hold a sentence to: each must be inside a row's quote.
SIGNS = re.compile(r"\d[\d.,']*\d|\d"                 # a figure, a limit, a status
                   r"|(?<![\w-])--?[A-Za-z][\w-]*"    # an option
                   r"|\bHEAPLINE_[A-Z_]+"              # a setting
                   r"|\"[^\"]+\"")                    # a quoted message or field
RULE_WORDS = re.compile(
    r"\brefus|\bat (most|least)\b|\bdefault|\bnever\b|\balways\b|\bexit(s)? (status|with)|\bstatus\b"
    r"|\bexact(ly)?\b|\bSIG[A-Z]+"
    r"|\b(one|two|three|four|five|six|seven|eight|nine|ten|twelve|once|twice|half|none|nothing|only)\b"
    r"|\b(first|last|newest|oldest|largest|smallest|median|ordered)\b", re.IGNORECASE)


def statement(sentence):
    """A sentence that states what the tools do in a way a test can hold:
    a figure, an option, a setting, a quoted text, or a rule's word."""
    return bool(SIGNS.search(sentence) or RULE_WORDS.search(sentence))


# ---------------------------------------------------------------------------
# The rows.

class Row:
    def __init__(self, sources, where):
        self.sources = sources
        self.where = where
        self.quote_lines = []
        self.tests = []
        self.exempt = None

    @property
    def quote(self):
        return normalised(" ".join(self.quote_lines))

    def pattern(self):
        return re.compile(".*?".join(re.escape(part.strip()) for part in self.quote.split(ELLIPSIS)))


def read_rows(path):
    """The rows of behaviours.txt. '@ SOURCE' sets the source of the rows
    after it ('@ A | B': each row is in both; a pattern such as
    '@ heapline-bench * --help' covers each source that holds the quote);
    '> ' lines are a row's quote (more '> ' lines continue it); '= ' lines
    name its tests; '! ' says why it is exempt."""
    rows, problems = [], []
    sources, row = None, None
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.rstrip("\n")
            where = f"{ROWS}:{number}"
            if not line.strip() or line.startswith("#"):
                continue
            if line.startswith("@ "):
                sources, row = [name.strip() for name in line[2:].split("|")], None
            elif line.startswith("> ") or line == ">":
                if sources is None:
                    problems.append(f"{where}: a quote before any '@ SOURCE' line")
                    continue
                if row is None or row.tests or row.exempt:
                    row = Row(sources, where)
                    rows.append(row)
                row.quote_lines.append(line[2:])
            elif line.startswith("= ") and row is not None:
                row.tests += line[2:].split()
            elif line.startswith("! ") and row is not None:
                row.exempt = line[2:].strip()
            else:
                problems.append(f"{where}: expected '@ SOURCE', '> QUOTE', '= TESTS' or '! WHY'")
    for row in rows:
        if not row.tests and not row.exempt:
            problems.append(f"{row.where}: \"{row.quote[:60]}\" names no test ('= TEST...') and no reason ('! WHY')")
        if row.tests and row.exempt:
            problems.append(f"{row.where}: \"{row.quote[:60]}\" names tests and is exempt: which?")
    return rows, problems


# ---------------------------------------------------------------------------
# The check.

def program_helps(heapline, bench):
    """{'heapline --help': text, 'heapline run --help': text, ...}: each
    program's and each of its subcommands' help, as a user sees it."""
    helps = {}
    env = dict(os.environ, LC_ALL="C", COLUMNS="80")
    for name, program in (("heapline", heapline), ("heapline-bench", bench)):
        top = subprocess.run([program, "--help"], capture_output=True, text=True, env=env).stdout
        helps[f"{name} --help"] = top
        listing = re.split(r"^Subcommands:$", top, maxsplit=1, flags=re.M | re.I)
        for m in re.finditer(r"^  (\w[\w-]*)\s", listing[1] if len(listing) == 2 else "", re.M):
            helps[f"{name} {m.group(1)} --help"] = subprocess.run(
                [program, m.group(1), "--help"], capture_output=True, text=True, env=env).stdout
    return helps


def ctest_names(build_dir):
    listing = subprocess.run(["ctest", "--test-dir", build_dir, "-N"], capture_output=True, text=True).stdout
    # A parameterised test is listed with its parameter after "  #".
    return {m.group(1).split("  #")[0] for m in re.finditer(r"^\s*Test\s+#\d+: (.+?)\s*$", listing, re.M)}


def statements_of(source_dir, heapline, bench):
    """{source: (normalised text, [(start, sentence)])}: every statement
    sentence of every source, where it starts in its normalised text."""
    units = {}
    for source in SOURCES:
        with open(os.path.join(source_dir, source), encoding="utf-8") as f:
            text = f.read()
        units[source] = (normalised(text), [(False, s) for s in markdown_sentences(text)])
    for name, text in program_helps(heapline, bench).items():
        units[name] = (normalised(text), help_units(text))
    result = {}
    for source, (text, its_units) in units.items():
        found, cursor = [], 0
        for is_item, sentence in its_units:
            start = text.find(sentence, cursor)
            if start < 0:
                sys.exit(f"behaviours: cannot find a sentence of {source} in its text: {sentence}")
            cursor = start + len(sentence)
            if statement(sentence) or is_item:
                found.append((start, sentence))
        result[source] = (text, found)
    return result


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    source_dir, build_dir, heapline, bench = sys.argv[1:5]
    listing = "--list" in sys.argv[5:]
    rows, problems = read_rows(os.path.join(source_dir, ROWS))
    sources = statements_of(source_dir, heapline, bench)
    known_tests = ctest_names(build_dir)
    if not known_tests:
        problems.append(f"ctest lists no test in {build_dir}")

    # Where each row's quote is: source -> [(start, end, row)].
    spans = {}
    for row in rows:
        for source in row.sources:
            pattern = any(c in source for c in "*?[")
            matching = fnmatch.filter(sources, source) if pattern else [source]
            if not matching or not all(name in sources for name in matching):
                problems.append(f"{row.where}: no source '{source}' (one of {', '.join(sorted(sources))})")
                continue
            found_in = [(name, row.pattern().search(sources[name][0])) for name in matching]
            found_in = [(name, found) for name, found in found_in if found]
            if not found_in or (not pattern and len(found_in) != len(matching)):
                problems.append(f"{row.where}: not in {source} any more: \"{row.quote}\"")
            for name, found in found_in:
                spans.setdefault(name, []).append((found.start(), found.end(), row))
        for test in row.tests:
            if test not in known_tests:
                problems.append(f"{row.where}: no test {test} in ctest -N (it pins \"{row.quote[:80]}\")")

    missing = []
    counts = {"statements": 0, "pinned": 0, "exempt": 0}
    pinning_tests = set()
    for source, (text, statements) in sources.items():
        for start, sentence in statements:
            counts["statements"] += 1
            end = start + len(sentence)
            covering = [(s, e, row) for (s, e, row) in spans.get(source, []) if s < end and e > start]
            unquoted = [m.group(0) for m in SIGNS.finditer(sentence)
                        if not any(s <= start + m.start() and start + m.end() <= e for s, e, _ in covering)]
            if not covering or unquoted:
                missing.append((source, sentence, unquoted if covering else []))
            elif all(row.exempt for _, _, row in covering):
                counts["exempt"] += 1
            else:
                counts["pinned"] += 1
                pinning_tests.update(t for _, _, row in covering for t in row.tests)
            if listing:
                tests = sorted({t for _, _, row in covering for t in row.tests})
                why = [row.exempt for _, _, row in covering if row.exempt]
                print(f"{source}: {sentence}\n    {', '.join(tests) or ('exempt: ' + why[0] if why else 'NONE')}")

    for problem in problems:
        print(problem)
    if missing:
        print(f"\nStatements without a test: add to {ROWS} a row for each (its tests after '= ', or why it is "
              "exempt after '! '):")
        last_source = None
        for source, sentence, unquoted in missing:
            if source != last_source:
                print(f"\n@ {source}")
                last_source = source
            if unquoted:
                print(f"# its rows leave out {', '.join(unquoted)}")
            print(f"> {sentence}\n= ")
    print(f"\nbehaviours: {counts['statements']} statements in {len(sources)} sources: {counts['pinned']} pinned by "
          f"{len(pinning_tests)} tests, {counts['exempt']} exempt, {len(missing)} without a test; "
          f"{len(rows)} rows in {ROWS}")
    return 1 if problems or missing else 0


if __name__ == "__main__":
    sys.exit(main())
