// How outside text (a commit, a machine's description, a catalogue's text,
// a reason quoting a point) goes into each format the harness writes for
// another program: one function per format, so that no input ever makes the
// output hold a line, a cell, a field or a command that the input did not own
// (tests/fuzz/outputs_fuzz.cc checks it on any bytes).
#pragma once

#include <string>
#include <string_view>

namespace heapline::bench {

// Text as it can be shown anywhere: every control character (U+0000 to
// U+001F, U+007F) and every byte that is not UTF-8 becomes U+FFFD.
std::string displayable(std::string_view text);

// A gnuplot string literal in single quotes (where gnuplot expands nothing:
// no backquote command, no macro): quotes doubled, displayable().
std::string gnuplot_string(std::string_view text);

// One whitespace-separated word of a gnuplot data file: displayable(), with
// blanks, quotes and the comment sign '#' replaced by '_'.
std::string gnuplot_data_word(std::string_view text);

// An inline code span in Markdown (GitHub's tables and MyST): displayable(),
// '|' escaped (GFM splits a table's cells on it even in code), fenced with
// more backquotes than any run inside.
std::string markdown_code(std::string_view text);

// Plain text inside a line of Markdown (a table cell, a sentence): displayable(),
// every character that Markdown, GFM or MyST could read as inline markup, a
// cell's end or the end of an HTML comment escaped with a backslash.
std::string markdown_text(std::string_view text);

// One CSV field (RFC 4180): quoted when it holds a comma, a quote or a line
// break, quotes doubled.
std::string csv_field(std::string_view text);

}  // namespace heapline::bench
