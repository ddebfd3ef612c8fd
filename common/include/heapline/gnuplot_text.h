// Text from outside (a program's name, a marker, a scenario, a machine's
// description) in a gnuplot script: the one quoting of heapline's launcher
// and heapline-bench.
//
// gnuplot_string() makes a string expression that evaluates to the text as
// a terminal would show it (heapline/terminal_text.h: control characters
// and bytes that are not UTF-8 as \xNN), on one line, in which gnuplot
// substitutes nothing:
//  - the text between quotes goes into single-quoted strings: gnuplot
//    expands backquotes (a shell command) and macros inside double quotes,
//    never inside single ones, and reads no backslash escape there;
//  - each quote of the text is a piece of its own, "'" (a double-quoted
//    string that holds one quote and nothing to expand), joined to the rest
//    with '.'. gnuplot's own escape of a quote, doubling it, is not used:
//    gnuplot 5.4 reads a string that starts with two quotes as an empty
//    string followed by another token, and refuses two doubled quotes in a
//    row, so a marker or a cpu model that started with a quote lost its
//    plot;
//  - the empty text is ''.
//  - `]]>`, which XML refuses in text and gnuplot's svg terminal writes as
//    it is (it escapes & and < alone), is `]]\x3e`, in the \xNN of
//    terminal_text: an SVG whose title names a program `p]]>q` stays XML.
// Every place a script takes a string (set output, set title, set label,
// set xtics, a plot's title) takes such an expression.
#pragma once

#include <algorithm>
#include <string>
#include <string_view>

#include "heapline/terminal_text.h"

namespace heapline {

// The text as a terminal shows it, with each `]]>` as `]]\x3e` (above).
inline std::string gnuplot_shown(std::string_view text) {
  std::string shown = terminal_text(text);
  for (std::size_t at = shown.find("]]>"); at != std::string::npos; at = shown.find("]]>", at + 2)) {
    shown.replace(at + 2, 1, "\\x3e");
  }
  return shown;
}

inline std::string gnuplot_string(std::string_view text) {
  const std::string shown = gnuplot_shown(text);
  if (shown.empty()) return "''";
  std::string out;
  for (std::size_t at = 0; at < shown.size();) {
    if (!out.empty()) out += '.';
    if (shown[at] == '\'') {
      out += "\"'\"";
      ++at;
      continue;
    }
    const std::size_t end = std::min(shown.find('\'', at), shown.size());
    out += '\'';
    out.append(shown, at, end - at);
    out += '\'';
    at = end;
  }
  return out;
}

// One whitespace-separated word of a gnuplot data file (a label read with
// `using ...:xtic(N)`): as gnuplot_shown shows it, with blanks, quotes and
// the comment sign '#' replaced by '_'; never empty.
inline std::string gnuplot_data_word(std::string_view text) {
  std::string out = gnuplot_shown(text);
  for (char& c : out) {
    if (c == ' ' || c == '#' || c == '"' || c == '\'') c = '_';
  }
  return out.empty() ? "_" : out;
}

}  // namespace heapline
