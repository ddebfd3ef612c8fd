#include "heapline_bench/reports/escaping.h"

#include <algorithm>

#include "heapline_bench/text/text.h"

namespace heapline::bench {

std::string displayable(std::string_view text) { return heapline::terminal_text(text); }

std::string markdown_code(std::string_view text) {
  std::string inside;
  std::size_t longest_run = 0, run = 0;
  for (char c : displayable(text)) {
    run = c == '`' ? run + 1 : 0;
    longest_run = std::max(longest_run, run);
    if (c == '|') inside += '\\';
    inside += c;
  }
  const std::string fence(longest_run + 1, '`');
  if (inside.empty()) return "` `";
  // CommonMark strips one space from each side of a span that has one on
  // both and is not all spaces: a span that starts or ends with a backquote
  // (which would join the fence), or has a space at both ends (which would
  // be lost), gets one more space inside its fence for the reader to strip.
  const bool blank = inside.find_first_not_of(' ') == std::string::npos;
  const bool pad = inside.front() == '`' || inside.back() == '`' ||
                   (!blank && inside.front() == ' ' && inside.back() == ' ');
  return fence + (pad ? " " : "") + inside + (pad ? " " : "") + fence;
}

std::string markdown_text(std::string_view text) {
  std::string out;
  for (char c : displayable(text)) {
    if (std::string_view("\\`*_{}[]<>#|~!$&").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::string csv_field(std::string_view text) {
  // A spreadsheet reads a cell that starts with = + - @ (or a tab or a
  // carriage return before one) as a formula, which can fetch a URL or run
  // a command: such a text is made text with a leading quote (OWASP's rule
  // for CSV injection). Figures are written as numbers, never through here.
  std::string cell;
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos) cell = "'";
  cell += text;
  if (cell.find_first_of(",\"\r\n") == std::string::npos) return cell;
  std::string out = "\"";
  for (char c : cell) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace heapline::bench
