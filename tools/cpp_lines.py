"""Reading C++ source lines as code: comments and the insides of string and
character literals blanked out. The one reader of the tree's checks
(tools/mutants.py, the line rules of tests/tools/line_rules.py, the OS
boundary of tests/interposer/os_boundary.py), so that what counts as a
comment is decided once."""


def masked_lines(lines, keep_literals=False):
    """Each line with its comments and the insides of its string and
    character literals replaced by spaces (same length, so that a position in
    the masked line is a position in the line). Block comments may span
    lines; a literal may not (heapline has no multi-line raw string).
    keep_literals: the literals are kept as they are (a rule about the text
    a program writes, such as gnuplot's "set output"); a // or /* inside one
    is still no comment."""
    in_comment = False
    result = []
    for line in lines:
        out = []
        i, n = 0, len(line)
        while i < n:
            if in_comment:
                end = line.find("*/", i)
                stop = n if end < 0 else end + 2
                out.append(" " * (stop - i))
                in_comment = end < 0
                i = stop
            elif line.startswith("//", i):
                out.append(" " * (n - i))
                i = n
            elif line.startswith("/*", i):
                out.append("  ")
                in_comment = True
                i += 2
            elif line[i] in "\"'" and not (line[i] == "'" and i > 0 and line[i - 1].isalnum()):
                # A literal (a ' after a digit or letter is a digit separator
                # or a prefix's end, as in 1'000 or u8'a').
                quote, j = line[i], i + 1
                while j < n and line[j] != quote:
                    j += 2 if line[j] == "\\" else 1
                j = min(j, n - 1)
                if keep_literals:
                    out.append(line[i:j + 1])
                else:
                    out.append(quote + " " * (j - i - 1) + line[j] if j > i else quote)
                i = j + 1
            else:
                out.append(line[i])
                i += 1
        result.append("".join(out))
    return result
