// The property of every text that reaches gnuplot: no input (a program's
// file name, a marker's name) ever makes the script hold a line, or a part
// of a line, that the input did not own. Shared by the unit test (every
// control byte and quote) and the fuzz target (plot_script_fuzz.cc).
#pragma once

#include <string>
#include <vector>

#include <heapline/report_reader.h>

#include "timeline_plot.h"

namespace heapline::test {

// The script with each string expression emptied (heapline/gnuplot_text.h:
// single-quoted pieces without a quote inside and "'" pieces, joined by
// '.'): what heapline wrote, without what the program wrote. A literal
// that a line break or the end cuts shows as "<unterminated>".
inline std::vector<std::string> script_skeleton(const std::string& script) {
  std::vector<std::string> lines(1);
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == '\'' || script.compare(i, 3, "\"'\"") == 0) {
      std::size_t j = i;
      bool cut = false;
      for (;;) {
        if (script.compare(j, 3, "\"'\"") == 0) {
          j += 3;
        } else {
          const std::size_t close = script.find_first_of("'\n", j + 1);
          if (close == std::string::npos || script[close] == '\n') {
            cut = true;
            j = close == std::string::npos ? script.size() : close;
            break;
          }
          j = close + 1;
        }
        if (j + 1 < script.size() && script[j] == '.' && (script[j + 1] == '\'' || script[j + 1] == '"')) {
          ++j;
          continue;
        }
        break;
      }
      lines.back() += cut ? "<unterminated>" : "''";
      i = j - 1;
      continue;
    }
    if (c == '\n') {
      lines.emplace_back();
    } else {
      lines.back() += c;
    }
  }
  return lines;
}

// "" when `script` is `expected` literal for literal (each string
// expression emptied) and holds no control byte but its newlines.
inline std::string script_injection(const std::string& script, const std::string& expected) {
  for (const char c : script) {
    if ((static_cast<unsigned char>(c) < 0x20 && c != '\n') || c == 0x7f) {
      return "a control byte " + std::to_string(static_cast<unsigned char>(c)) + " in the script:\n" + script;
    }
  }
  const std::vector<std::string> got = script_skeleton(script);
  const std::vector<std::string> want = script_skeleton(expected);
  if (got.size() != want.size()) {
    return std::to_string(got.size()) + " lines instead of " + std::to_string(want.size()) + ":\n" + script;
  }
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i]) return "line " + std::to_string(i + 1) + " is \"" + got[i] + "\", not \"" + want[i] + "\"";
  }
  return "";
}

// `report` with every text the program wrote replaced by a plain word.
inline heapline::ParsedReport with_plain_words(const heapline::ParsedReport& report) {
  heapline::ParsedReport plain = report;
  plain.exe = "/bin/program";
  for (heapline::ReportMarker& marker : plain.markers) marker.name = "marker";
  return plain;
}

// "" when the script of `report` is the script of the same report with
// every program-written text replaced by a plain word, literal for literal,
// and holds no control byte but its newlines; else what differs.
inline std::string plot_script_injection(const heapline::ParsedReport& report) {
  const heapline::ParsedReport plain = with_plain_words(report);
  return script_injection(heapline::launcher::plot_script(report, "/out/plot.svg", "/tmp/plot.dat"),
                          heapline::launcher::plot_script(plain, "/out/plot.svg", "/tmp/plot.dat"));
}

// The same for the tree's plot: the report as the command and as a process
// it started, whose names (program, markers) appear in titles and labels.
inline std::string tree_plot_script_injection(const heapline::ParsedReport& report) {
  auto tree_of = [](const heapline::ParsedReport& command) {
    heapline::ParsedReport child = command;
    child.pid = command.pid + 1;
    child.start_unix_ns = command.start_unix_ns + 1;
    return std::vector<heapline::launcher::TreeReport>{{"a", command}, {"b", child}};
  };
  const heapline::ParsedReport plain = with_plain_words(report);
  return script_injection(heapline::launcher::tree_plot_script(tree_of(report), "/out/plot.svg", "/tmp/plot.dat"),
                          heapline::launcher::tree_plot_script(tree_of(plain), "/out/plot.svg", "/tmp/plot.dat"));
}

}  // namespace heapline::test
