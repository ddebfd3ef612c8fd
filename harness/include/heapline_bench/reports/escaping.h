// How outside text (a commit, a machine's description, a catalogue's text,
// a reason quoting a point) goes into each format the harness writes for
// another program: one function per format, so that no input ever makes the
// output hold a line, a cell, a field or a command that the input did not own
// (tests/fuzz/outputs_fuzz.cc checks it on any bytes).
#pragma once

#include <string>
#include <string_view>

#include <heapline/gnuplot_text.h>
#include <heapline/terminal_text.h>

namespace heapline::bench {

// Text as it can be shown anywhere: heapline::terminal_text, the one rule of
// the launcher's and the library's too (control characters, C1 controls,
// bidirectional formatting and bytes that are not UTF-8 as \xNN).
std::string displayable(std::string_view text);

// A gnuplot string expression and a word of a gnuplot data file:
// heapline/gnuplot_text.h, shared with the launcher's plots.
using heapline::gnuplot_data_word;
using heapline::gnuplot_string;

// An inline code span in Markdown (GitHub's tables and MyST): displayable(),
// '|' escaped (GFM splits a table's cells on it even in code), fenced with
// more backquotes than any run inside.
std::string markdown_code(std::string_view text);

// Plain text inside a line of Markdown (a table cell, a sentence): displayable(),
// every character that Markdown, GFM or MyST could read as inline markup, a
// cell's end or the end of an HTML comment escaped with a backslash.
std::string markdown_text(std::string_view text);

// One CSV text field (RFC 4180): quoted when it holds a comma, a quote or a
// line break, quotes doubled; a text that starts with = + - @, a tab or a
// carriage return (a spreadsheet formula) gets a leading ' (OWASP's rule for
// CSV injection). Every text cell of every CSV heapline-bench writes is one.
std::string csv_field(std::string_view text);

}  // namespace heapline::bench
