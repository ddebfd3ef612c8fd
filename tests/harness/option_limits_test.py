#!/usr/bin/env python3
"""option_limits_test.py BENCH HEAPLINE: every numeric option of heapline-bench
and heapline is read by one rule per kind (heapline/option_checks.h): it takes
the limits its --help states and refuses one past each, and refuses every
spelling that is not a plain decimal number (0x10, +1, spaces, NaN, an
infinity, an empty value; a fraction or an exponent for a whole number),
with exit status 2 and "OPTION: must be ...", whichever subcommand has it.
A number's range is closed and sensible: each end 0 or a magnitude from
1e-12 to 1e12 ("a number above 0" took 1e-300).

Every list option (its help says A:B or comma-separated) refuses an empty
part (a separator first, last or twice) and a name given twice, in one value
or, where the option is given several times, across them: "OPTION: has an
empty part" or "OPTION: names 'X' twice", status 2.

A word where a subcommand goes that names none, and a word after a
subcommand's own, are named in the refusal (status 2).

Every refusal of these is one line on stderr that starts with the
program's name (heapline printed its whole help after it, heapline-bench a
second line without its name).

The options are read from each subcommand's --help ("a whole number from 1
to 10000", "a number from 1e-06 to 0.5", "a number above 0, at most 1000"),
so an option added later is checked too; an option whose help gives a
numeric type (INT, UINT, FLOAT) without such a range fails the test: it
would be read by CLI11's own conversion, which takes 0x10 as 16. A value
taken runs the subcommand no further than its first refusal of another kind
(a library, a file or a process that does not exist, an empty store): its
status is then 0 or 1, never 2.
"""
import os
import re
import subprocess
import sys
import tempfile

BENCH, HEAPLINE = sys.argv[1], sys.argv[2]
NUMBER = r"(-?[0-9][0-9.e+-]*)"
TYPED = re.compile(r"^\s+((?:-\w,)?--[\w-]+|[A-Z]+) (INT|UINT|FLOAT|NUMBER)\b(.*)$", re.M)
RANGE = re.compile(r"^:(?:a whole number from " + NUMBER + " to " + NUMBER + r"|a number from " + NUMBER + " to " +
                   NUMBER + r")(?:=\S+)?(?: REQUIRED)?(?:\s|$)")


def sensible_limit(limit):
    """A number's range ends at 0 or at a magnitude from 1e-12 to 1e12."""
    return limit == 0 or 1e-12 <= abs(limit) <= 1e12


def bounded_options(program, subcommand, problems):
    """[(option, kind, low, high, low included)] from the subcommand's help;
    a numeric option without a stated range is a problem."""
    text = subprocess.run([program, subcommand, "--help"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200")).stdout
    found = []
    for typed in TYPED.finditer(text):
        option = typed.group(1).split(",")[-1]
        m = RANGE.match(typed.group(3))
        if m is None:
            problems.append(f"{os.path.basename(program)} {subcommand} {option}: a number without a stated range "
                            f"(read by CLI11's own conversion): {typed.group(0).strip()}")
        elif m.group(1) is not None:
            found.append((option, "whole", int(m.group(1)), int(m.group(2)), True))
        else:
            low, high = float(m.group(3)), float(m.group(4))
            if not (sensible_limit(low) and sensible_limit(high) and low < high):
                problems.append(f"{os.path.basename(program)} {subcommand} {option}: the range {low:g} to {high:g} "
                                "is not sensible (each end 0 or a magnitude from 1e-12 to 1e12)")
            found.append((option, "number", low, high, True))
    return found


LISTED = re.compile(r"^\s+((?:-\w,)?--[\w-]+|[A-Z]+) TEXT\b[^\n]*?(?:\n {20,}[^\n]*?)?(A:B|comma-separated)",
                    re.M)
# A name each list option takes, to repeat and to cut.
LIST_NAMES = {"LIB": "libheapline.so", "--lib": "libheapline.so", "--only": "churn-1t", "--gate": "wall"}


def list_options(program, subcommand):
    """[(option, separator, several)] of the subcommand's help: an option
    whose help says A:B separates by ':', comma-separated by ','; `several`
    when the help shows it may be given more than once (TEXT ...)."""
    text = subprocess.run([program, subcommand, "--help"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200")).stdout
    found = []
    for m in LISTED.finditer(text):
        line = text[m.start():text.find("\n", m.start())]
        found.append((m.group(1).split(",")[-1], ":" if m.group(2) == "A:B" else ",",
                      re.search(r" TEXT(:\S+|=\S+)? \.\.\.", line) is not None))
    return found


FLAG = re.compile(r"^\s+((?:-\w,)?--[\w-]+)(?!\s+(?:INT|UINT|FLOAT|TEXT|NUMBER)\b)(?= |$)", re.M)


def flags(program, subcommand):
    """The flags of the subcommand's help (options that take no value)."""
    text = subprocess.run([program, subcommand, "--help"], capture_output=True, text=True,
                          env=dict(os.environ, COLUMNS="200")).stdout
    names = [m.group(1).split(",")[-1] for m in FLAG.finditer(text)]
    return [name for name in names if name not in ("--help", "--help-all", "--version")]


def odd_spellings(kind, low):
    """Values no numeric option takes, whatever its range: other bases,
    signs, spaces, words; for a whole number, a fraction or an exponent."""
    plain = str(low) if kind == "whole" else repr(low)
    odd = ["", " ", "0x10", "0X1", "+" + plain.lstrip("-"), " " + plain, plain + " ", plain + "\n", "nan", "NaN", "inf",
           "-inf", "1e400", "1,5", "ten", "1_000"]
    if kind == "whole":
        odd += [plain + ".0", plain + "e0", "0b1", "0o7"]
    else:
        odd += ["0x1p0", "infinity"]
    return odd


def main():
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as work:
        store = os.path.join(work, "store")
        os.makedirs(store)
        missing = os.path.join(work, "missing", "libheapline.so")
        absent = os.path.join(work, "absent")
        # program, subcommand -> the command line a value goes into ("{}" for a positional).
        base = {
            (BENCH, "overhead"): {"RUNS": ["overhead", "churn-1t", missing, "{}"],
                                  "LIB": ["overhead", "churn-1t", "{}", "10"],
                                  None: ["overhead", "churn-1t", missing, "10"]},
            (BENCH, "suite"): {None: ["suite", "--store", store, "--lib", missing]},
            (BENCH, "compare"): {None: ["compare"]},
            (BENCH, "check"): {None: ["check", "--store", store]},
            (BENCH, "instructions"): {None: ["instructions", "--lib", missing]},
            (BENCH, "calibrate"): {None: ["calibrate", "--store", store, "--lib", missing]},
            (BENCH, "render"): {None: ["render", "--store", absent]},
            (HEAPLINE, "top"): {"PID": ["top", "{}", "--once"], None: ["top", "1", "--once"]},
            (HEAPLINE, "convert"): {None: ["convert", absent + ".live"]},
            (HEAPLINE, "profile"): {None: ["profile", absent + ".json"]},
            (HEAPLINE, "clean"): {None: ["clean", absent]},
            (HEAPLINE, "run"): {None: ["run", "--lib", missing, "--", "true"]},
        }
        for program in (BENCH, HEAPLINE):
            helped = subprocess.run([program, "--help"], capture_output=True, text=True).stdout
            for name in re.findall(r"^  (\w+)\s", helped.split("Subcommands:")[-1], re.M):
                if (program, name) not in base and name not in ("accuracy", "validate", "import", "export"):
                    problems.append(f"{os.path.basename(program)} {name}: a subcommand this test does not run "
                                    "(add its command line to base)")

        # A refusal of the command line is one line, that starts with the
        # program's name (heapline printed its whole help after it;
        # heapline-bench a second line without its name).
        def one_line(args, result):
            lines = result.stderr.splitlines()
            name = os.path.basename(args[0])
            if result.returncode == 2 and (len(lines) != 1 or not lines[0].startswith(name + ":") and
                                           not lines[0].startswith(name + " ")):
                problems.append(f"{name} {' '.join(args[1:])!r}: the refusal is not one line of {name}'s: "
                                f"{result.stderr.strip()[:300]}")

        def command(program, subcommand, option, value):
            lines = base[(program, subcommand)]
            if option in lines:
                return [value if word == "{}" else word for word in lines[option]]
            args = list(lines[None])
            tail = []
            if "--" in args:
                at = args.index("--")
                args, tail = args[:at], args[at:]
            args += [option] if value is None else [option, value]
            # The rule between two options: --min-history at most --window.
            if option == "--window":
                args += ["--min-history", "2"]
            if option == "--min-history":
                args += ["--window", "10000"]
            return args + tail

        stated = 0
        for program, subcommand in base:
            options = bounded_options(program, subcommand, problems)
            stated += len(options)
            for option, kind, low, high, low_included in options:
                if kind == "whole":
                    taken, refused = [str(low), str(high)], [str(low - 1), str(high + 1)]
                else:
                    past_low = low if not low_included else low - max(abs(low), 1) * 1e-3
                    taken = [repr(high), repr(low if low_included else low + max(abs(low), 1) * 1e-6)]
                    refused = [repr(past_low), repr(high + max(abs(high), 1) * 1e-6)]
                # A positional's value that starts with '-' is read as an option.
                refused += [v for v in odd_spellings(kind, low) if not (option.isupper() and v.startswith("-"))]
                for value, expected in [(v, True) for v in taken] + [(v, False) for v in refused]:
                    args = command(program, subcommand, option, value)
                    result = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
                    checked += 1
                    said = f"{option}: must be"
                    shown = f"{os.path.basename(program)} {' '.join(args)!r}"
                    if expected and (result.returncode == 2 or said in result.stderr):
                        problems.append(f"{shown}: refused a value within the stated limits: {result.stderr.strip()}")
                    if not expected:
                        one_line([program, *args], result)
                    if not expected and (result.returncode != 2 or said not in result.stderr):
                        problems.append(f"{shown}: took {value!r}, which its rule refuses (status "
                                        f"{result.returncode}): {result.stderr.strip()[:200]}")
        # A flag takes no value: CLI11's own spellings of true and false
        # (0, no, yes, off) would set it without any setting's rule, and an
        # empty one (--profile=) was taken as the flag.
        flagged = 0
        for program, subcommand in base:
            for flag in flags(program, subcommand):
                flagged += 1
                for value in ("0", "no", "yes", "off", ""):
                    args = command(program, subcommand, f"{flag}={value}", None)
                    result = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
                    checked += 1
                    one_line([program, *args], result)
                    if result.returncode != 2 or f"{flag}: a flag takes no value" not in result.stderr:
                        problems.append(f"{os.path.basename(program)} {' '.join(args)!r}: a flag took a value "
                                        f"(status {result.returncode}): {result.stderr.strip()[:200]}")
        # Lists: no empty part, no name twice.
        listed = 0
        for program, subcommand in base:
            for option, separator, several in list_options(program, subcommand):
                listed += 1
                name = LIST_NAMES.get(option)
                if name is None:
                    problems.append(f"{os.path.basename(program)} {subcommand} {option}: a list option without "
                                    "a name to try (add one to LIST_NAMES)")
                    continue
                other = "x" + name
                cases = [(name + separator, "has an empty part"), (separator + name, "has an empty part"),
                         (name + separator * 2 + other, "has an empty part"), (separator, "has an empty part"),
                         (name + separator + name, f"names '{name}' twice"),
                         (other + separator + name + separator + name, f"names '{name}' twice")]
                for value, said in cases:
                    args = command(program, subcommand, option, value)
                    result = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
                    checked += 1
                    one_line([program, *args], result)
                    if result.returncode != 2 or f"{option}: {said}" not in result.stderr:
                        problems.append(f"{os.path.basename(program)} {' '.join(args)!r}: took a list its rule "
                                        f"refuses (status {result.returncode}): {result.stderr.strip()[:200]}")
                if several:
                    args = command(program, subcommand, option, name)
                    at = args.index(option)
                    args = args[:at + 2] + [option, name] + args[at + 2:]
                    result = subprocess.run([program, *args], capture_output=True, text=True, timeout=60)
                    checked += 1
                    if result.returncode != 2 or f"{option}: names '{name}' twice" not in result.stderr:
                        problems.append(f"{os.path.basename(program)} {' '.join(args)!r}: took a name twice "
                                        f"(status {result.returncode}): {result.stderr.strip()[:200]}")
        if listed < 8:
            problems.append(f"only {listed} list options found in the helps: the pattern no longer reads them")
        # A stray word is named: where heapline-bench's subcommand goes, and
        # after a subcommand's own words (not where a command to run starts:
        # heapline's first word, run's and overhead's COMMAND).
        stray = "stray-word"
        strays = [[BENCH, stray], [BENCH, "--bin-dir", work, stray], [BENCH, "validate", "--store", store, stray],
                  [BENCH, "export", "--store", store, stray]]
        for (program, subcommand), lines in base.items():
            if subcommand in ("overhead", "run"):
                continue
            args = list(lines[None])
            # After the last word, unless that is an option that takes
            # several values (instructions --lib): then right after the
            # subcommand's name.
            at = args.index("--") if "--" in args else len(args)
            if subcommand == "instructions":
                at = 1
            strays.append([program, *args[:at], stray, *args[at:]])
        for args in strays:
            result = subprocess.run(args, capture_output=True, text=True, timeout=60)
            checked += 1
            one_line(args, result)
            if result.returncode != 2 or stray not in result.stderr:
                problems.append(f"{os.path.basename(args[0])} {' '.join(args[1:])!r}: a stray word not named in "
                                f"the refusal (status {result.returncode}): {result.stderr.strip()[:200]}")
        if flagged < 15:
            problems.append(f"only {flagged} flags found in the helps: the pattern no longer reads them")
        if stated < 25:
            problems.append(f"only {stated} numeric options found in the helps: the pattern no longer reads them")
    for problem in problems:
        print(problem)
    print(f"option limits: {checked} values, {len(problems)} problems")
    return 1 if problems or checked < 300 else 0


if __name__ == "__main__":
    sys.exit(main())
