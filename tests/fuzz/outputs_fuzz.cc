// Every text the harness writes for another program, on any input text: the
// gnuplot script and data files of the page's plots (plot_files), the
// Markdown of the page, of the scenario table and of the suite's table, the
// CSV export and github-action-benchmark's JSON. Each output is made twice:
// from the fuzzed texts (commits, ranges, times, machines, fingerprints,
// commands, versions, scenario descriptions) and from the same history with
// every distinct text replaced by a plain word. The two must have the same
// structure: no input text ever makes an output hold a line, a table cell, a
// field, a gnuplot command or a code span that the input did not own.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <set>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "heapline_bench/reports/plot_export.h"
#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/history_page_export.h"
#include "heapline_bench/reports/exporter.h"
#include "heapline_bench/reports/scenarios_export.h"
#include "heapline_bench/reports/table_export.h"
#include "heapline_bench/text/text.h"

namespace {

using namespace heapline::bench;

[[noreturn]] void broken(const char* property, const std::string& output = {}) {
  std::fprintf(stderr, "outputs_fuzz: broken: %s\n%s\n", property, output.c_str());
  std::abort();
}
void expect(bool holds, const char* property, const std::string& output = {}) {
  if (!holds) broken(property, output);
}

// The input as texts (split at 0xFF) and small numbers.
class Input {
 public:
  Input(const std::uint8_t* data, std::size_t size) : bytes_(reinterpret_cast<const char*>(data), size) {
    std::size_t start = 0;
    while (start <= bytes_.size()) {
      const std::size_t end = std::min(bytes_.find('\xff', start), bytes_.size());
      texts_.emplace_back(bytes_.substr(start, end - start));
      start = end + 1;
    }
  }
  std::string text() { return texts_[next_text_++ % texts_.size()]; }
  unsigned number(unsigned modulo) {
    if (bytes_.empty()) return 0;
    return static_cast<unsigned char>(bytes_[next_byte_++ % bytes_.size()]) % modulo;
  }

 private:
  std::string bytes_;
  std::vector<std::string> texts_;
  std::size_t next_text_ = 0, next_byte_ = 0;
};

// Everything the outputs are made from.
struct World {
  Catalogue catalogue;
  History history;
  std::vector<Point> points;
  std::vector<SuiteRow> rows;
  std::string store_label;
  std::string library;
  Machine machine;
};

World world_of(Input& in) {
  World w;
  const unsigned scenarios = 1 + in.number(3);
  for (unsigned i = 0; i < scenarios; ++i) {
    Scenario s;
    s.name = in.text();
    if (!is_scenario_name(s.name) || w.catalogue.find(s.name) != nullptr) s.name = "s" + std::to_string(i);
    s.command = {in.text(), in.text()};
    s.shows = in.text();
    w.catalogue.scenarios.push_back(s);
  }
  const unsigned machines = 1 + in.number(3);
  for (unsigned i = 0; i < machines; ++i) {
    HistoryMachine m;
    m.fingerprint = in.text();
    m.machine.cpu_model = in.text();
    m.machine.cores = static_cast<int>(in.number(64));
    m.machine.compiler = in.text();
    w.history.machines.push_back(m);
  }
  const unsigned entries = in.number(12);
  for (unsigned i = 0; i < entries; ++i) {
    HistoryEntry e;
    e.line = static_cast<int>(i + 1);
    e.scenario = w.catalogue.scenarios[in.number(scenarios)].name;
    e.commit = in.number(4) == 0 ? std::string() : in.text();
    e.range_first = in.number(3) == 0 ? in.text() : std::string();
    e.measured_at = in.text();
    e.measured_at_ns = static_cast<std::int64_t>(i);
    e.timing = in.number(2) ? "command" : "benchmark";
    e.fingerprint = in.text();
    e.command = in.text();
    e.machine = static_cast<int>(in.number(machines + 1)) - 1;
    e.overhead = (static_cast<int>(in.number(200)) - 50) / 100.0;
    e.low = e.overhead - in.number(10) / 100.0;
    e.high = e.overhead + in.number(10) / 100.0;
    if (in.number(2)) e.cpu = {true, e.overhead / 2, e.low / 2, e.high / 2, true};
    if (in.number(2)) e.instructions = {true, e.overhead / 10, e.overhead / 10, e.overhead / 10, true};
    if (in.number(2)) e.publishes_per_1000_calls = in.number(100) / 3.0;
    if (in.number(2)) e.extra_peak_rss_kib = static_cast<long>(in.number(100)) * 1000;
    w.history.entries.push_back(e);

    Point p;
    p.scenario = e.scenario;
    p.commit = e.commit;
    if (!e.range_first.empty()) p.commit_range = CommitRange{e.range_first, e.commit};
    p.measured_at = e.measured_at;
    p.overhead = e.overhead;
    p.interval = {e.low, e.high};
    p.timing = e.timing;
    p.heapline_version = in.text();
    p.fingerprint = e.fingerprint;
    p.command = e.command;
    p.machine = {in.text(), static_cast<int>(in.number(64)), in.text(), in.text(), in.text(), in.text()};
    if (in.number(2)) p.cpu = RunFigure{e.overhead / 2, {e.low / 2, e.high / 2}, 1, 1};
    if (in.number(2)) p.instructions = InstructionFigure{e.overhead / 10, 1100, 1000, in.text()};
    w.points.push_back(p);

    SuiteRow row;
    row.scenario = e.scenario;
    row.command = e.command;
    row.measured = in.number(2) == 0;
    row.failure = "the command failed";
    row.point = p;
    w.rows.push_back(row);
  }
  if (in.number(2)) w.history.problems.push_back({in.text(), 7, in.text()});
  w.store_label = in.text();
  w.library = in.text();
  w.machine = {in.text(), 2, in.text(), in.text(), in.text(), in.text()};
  return w;
}

// The same world with every distinct text a distinct plain word (an empty
// text stays empty: emptiness is structure, "no commit").
World plain_twin(const World& w) {
  std::map<std::string, std::string> words;
  auto plain = [&](const std::string& text) {
    if (text.empty()) return text;
    auto [it, fresh] = words.emplace(text, "");
    if (fresh) it->second = "w" + std::to_string(words.size());
    return it->second;
  };
  World t = w;
  for (auto& s : t.catalogue.scenarios) {
    for (auto& word : s.command) word = plain(word);
    s.shows = plain(s.shows);
  }
  for (auto& m : t.history.machines) {
    m.fingerprint = plain(m.fingerprint);
    m.machine.cpu_model = plain(m.machine.cpu_model);
    m.machine.compiler = plain(m.machine.compiler);
  }
  for (auto& e : t.history.entries) {
    e.commit = plain(e.commit);
    e.range_first = plain(e.range_first);
    e.measured_at = plain(e.measured_at);
    e.fingerprint = plain(e.fingerprint);
    e.command = plain(e.command);
  }
  for (auto& p : t.points) {
    p.commit = plain(p.commit);
    if (p.commit_range) p.commit_range = CommitRange{plain(p.commit_range->first), plain(p.commit_range->last)};
    p.measured_at = plain(p.measured_at);
    p.heapline_version = plain(p.heapline_version);
    p.fingerprint = plain(p.fingerprint);
    p.command = plain(p.command);
    p.machine = {plain(p.machine.cpu_model), p.machine.cores, plain(p.machine.kernel), plain(p.machine.glibc),
                 plain(p.machine.compiler), plain(p.machine.runner_image)};
  }
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    t.rows[i].command = plain(t.rows[i].command);
    t.rows[i].point = t.points[i];
  }
  for (auto& problem : t.history.problems) {
    problem.file = plain(problem.file);
    problem.reason = plain(problem.reason);
  }
  t.store_label = plain(t.store_label);
  t.library = plain(t.library);
  t.machine = {plain(w.machine.cpu_model), 2, plain(w.machine.kernel), plain(w.machine.glibc),
               plain(w.machine.compiler), plain(w.machine.runner_image)};
  return t;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    lines.push_back(text.substr(start, end - start));
    start = end + 1;
  }
  return lines;
}

// A line of Markdown as its structure: how it starts, its cells (pipes not
// escaped by a backslash), its code spans (CommonMark: a run of n backquotes
// opens a span that the next run of exactly n closes), its HTML comment
// ends. Text inside spans and cells is left out.
std::string markdown_structure(const std::string& line) {
  std::string out;
  if (line.rfind("```", 0) == 0) out += "fence:" + line.substr(0, line.find_first_not_of('`')) + ";";
  if (line.rfind("<!--", 0) == 0) out += "comment;";
  if (!line.empty() && std::string_view("|-#!>*+").find(line[0]) != std::string_view::npos) out += line[0];
  int cells = 0, spans = 0, comment_ends = 0;
  // GFM splits a row's cells at every '|' not right after a backslash, in
  // code spans too.
  for (std::size_t k = 0; k < line.size(); ++k)
    if (line[k] == '|' && (k == 0 || line[k - 1] != '\\')) ++cells;
  std::size_t i = 0;
  auto run_at = [&](std::size_t at) {
    const std::size_t end = line.find_first_not_of('`', at);
    return (end == std::string::npos ? line.size() : end) - at;
  };
  while (i < line.size()) {
    const char c = line[i];
    if (c == '\\' && i + 1 < line.size() && (line[i + 1] == '`' || line[i + 1] == '\\')) {
      i += 2;  // an escaped backquote is text; so is an escaped backslash
      continue;
    }
    if (c == '`') {
      const std::size_t run = run_at(i);
      std::size_t j = i + run;
      bool closed = false;
      while (j < line.size()) {
        if (line[j] != '`') {
          ++j;
          continue;
        }
        const std::size_t other = run_at(j);
        j += other;
        if (other == run) {
          closed = true;
          break;
        }
      }
      if (!closed) {
        out += "open-run;";
        i += run;
        continue;
      }
      ++spans;
      i = j;
      continue;
    }
    if (line.compare(i, 3, "-->") == 0) ++comment_ends;
    ++i;
  }
  return out + "cells " + std::to_string(cells) + " spans " + std::to_string(spans) + " ends " +
         std::to_string(comment_ends);
}

// `table_only`: the suite's table, for a terminal: its rows are Markdown, the
// lines below them plain text (each still one line).
void same_markdown(const std::string& real, const std::string& twin, const char* what, bool table_only = false) {
  const auto a = lines_of(real), b = lines_of(twin);
  expect(a.size() == b.size(), what, real);
  for (std::size_t i = 0; i < a.size(); ++i) {
    const bool plain_text = table_only && a[i].rfind('|', 0) != 0 && b[i].rfind('|', 0) != 0;
    if (!plain_text && markdown_structure(a[i]) != markdown_structure(b[i]))
      broken(what, "line " + std::to_string(i + 1) + ": " + markdown_structure(a[i]) + " vs " +
                       markdown_structure(b[i]) + "\n" + a[i] + "\n" + b[i]);
  }
}

// A gnuplot script as its commands: string expressions (single-quoted
// pieces and "'" joined by '.', heapline/gnuplot_text.h) become 'S'; a string must close on its line and hold no
// control character; nothing else may quote, substitute or comment. A datablock's lines (`$name << EOD` to `EOD`) are
// data, never commands: each becomes its count of words, and none may end the block early (a word from outside that
// reads EOD, or a line break) or hold a quote gnuplot's data reader would take for a string.
std::string gnuplot_structure(const std::string& script) {
  std::string out;
  for (std::size_t i = 0; i < script.size(); ++i) {
    const char c = script[i];
    if (c == '$' && (i == 0 || script[i - 1] == '\n')) {
      const std::size_t header_end = script.find('\n', i);
      expect(header_end != std::string::npos && script.compare(header_end - 7, 7, " << EOD") == 0,
             "a datablock opens with << EOD", script);
      out += script.substr(i, header_end + 1 - i);
      std::size_t line_start = header_end + 1;
      for (;;) {
        const std::size_t line_end = script.find('\n', line_start);
        expect(line_end != std::string::npos, "a datablock closes", script);
        const std::string line = script.substr(line_start, line_end - line_start);
        line_start = line_end + 1;
        if (line == "EOD") break;
        expect(line.rfind("EOD", 0) != 0, "no data line starts with EOD", line);
        expect(find_control_character(line) == std::string::npos && line.find_first_of("\"'") == std::string::npos,
               "a data line holds no control character or quote", line);
        std::size_t words = 0;
        for (std::size_t k = line.find_first_not_of(' '); k != std::string::npos; k = line.find_first_not_of(' ', k)) {
          ++words;
          k = line.find(' ', k);
          if (k == std::string::npos) break;
        }
        out += "D" + std::to_string(words) + "\n";
      }
      out += "EOD\n";
      i = line_start - 1;
      continue;
    }
    if (c == '\'' || script.compare(i, 3, "\"'\"") == 0) {
      // One string expression (heapline/gnuplot_text.h): pieces joined by
      // '.', each "'" or a single-quoted string without a quote inside.
      std::size_t j = i;
      for (;;) {
        if (script.compare(j, 3, "\"'\"") == 0) {
          j += 3;
        } else {
          expect(script[j] == '\'', "a piece of a gnuplot string is quoted", script);
          for (++j;; ++j) {
            expect(j < script.size(), "a gnuplot string closes", script);
            expect(script[j] != '\n' && find_control_character(std::string_view(&script[j], 1)) == std::string::npos,
                   "a gnuplot string holds no line break or control character", script);
            if (script[j] == '\'') break;
          }
          ++j;
        }
        if (j + 1 < script.size() && script[j] == '.' && (script[j + 1] == '\'' || script[j + 1] == '"')) {
          ++j;
          continue;
        }
        break;
      }
      out += "'S'";
      i = j - 1;
      continue;
    }
    expect(c != '"' && c != '`' && c != '@' && c != '\\', "no double quote, backquote, macro or escape", script);
    out += c;
  }
  return out;
}

// The plots' one script holds every plotted point (as datablocks): the
// twin's script has the same commands, line for line, and the same files.
void same_plots(const World& real, const World& twin) {
  const auto a = plot_files(real.history, real.catalogue.names(), 500, {});
  const auto b = plot_files(twin.history, twin.catalogue.names(), 500, {});
  expect(gnuplot_structure(a.script) == gnuplot_structure(b.script), "the gnuplot script's commands", a.script);
  expect(a.svgs == b.svgs, "the plots' files");
}

// RFC 4180 rows of fields.
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows(1, std::vector<std::string>(1));
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (quoted) {
      if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
        rows.back().back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        rows.back().back() += c;
      }
    } else if (c == '"') {
      expect(rows.back().back().empty(), "a CSV quote opens a field", text);
      quoted = true;
    } else if (c == ',') {
      rows.back().emplace_back();
    } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
      rows.emplace_back(1);
      ++i;
    } else {
      expect(c != '\r' && c != '\n', "a bare line break in CSV", text);
      rows.back().back() += c;
    }
  }
  expect(!quoted, "a CSV quote closes", text);
  if (rows.back().size() == 1 && rows.back()[0].empty()) rows.pop_back();
  return rows;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  Input in(data, size);
  World real = world_of(in);
  World twin = plain_twin(real);

  same_plots(real, twin);

  RenderOptions options;
  options.store_label = real.store_label;
  RenderOptions twin_options = options;
  twin_options.store_label = twin.store_label;
  same_markdown(history_page_markdown(real.history, real.catalogue, options, ""),
                history_page_markdown(twin.history, twin.catalogue, twin_options, ""), "the page's Markdown");
  same_markdown(scenarios_markdown(real.catalogue), scenarios_markdown(twin.catalogue), "the scenario table");
  same_markdown(format_suite_table(real.rows, real.library, real.machine),
                format_suite_table(twin.rows, twin.library, twin.machine), "the suite's table", true);

  // CSV: one row per point and the header, as many fields as the header,
  // every text field the point's own, byte for byte.
  const auto rows = csv_rows(exporter_named("csv").serialize(real.points, {}));
  expect(rows.size() == real.points.size() + 1, "one CSV row per point");
  std::map<std::string, std::size_t> column;
  for (std::size_t i = 0; i < rows[0].size(); ++i) column[rows[0][i]] = i;
  for (std::size_t i = 1; i < rows.size(); ++i) {
    expect(rows[i].size() == rows[0].size(), "a CSV row has the header's fields");
    const Point& p = real.points[i - 1];
    const auto& row = rows[i];
    // A text that a spreadsheet would read as a formula is kept with a
    // leading quote (csv_field), and no cell is one.
    auto as_cell = [](const std::string& text) {
      return !text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos ? "'" + text
                                                                                                          : text;
    };
    expect(row[column.at("measured_at")] == as_cell(p.measured_at) && row[column.at("commit")] == as_cell(p.commit) &&
               row[column.at("scenario")] == as_cell(p.scenario) &&
               row[column.at("heapline_version")] == as_cell(p.heapline_version) &&
               row[column.at("fingerprint")] == as_cell(p.fingerprint) &&
               row[column.at("machine")] == as_cell(p.machine.describe()),
           "a CSV field is the point's text");
  }

  // The one-commit JSON exports: they parse, github-action-benchmark has one
  // entry per figure of each benchmark of the commit, Bencher one object per
  // benchmark.
  for (const auto& p : real.points) {
    if (p.commit.empty()) continue;
    const ExportRequest request{p.commit};
    const auto selected = points_of_commit(real.points, request);
    std::size_t figures = 0;
    for (const Point* q : selected) figures += exported_figures(*q).size();
    const std::string action = exporter_named("github-action-benchmark").serialize(real.points, request);
    const auto entries = nlohmann::json::parse(action, nullptr, false);
    expect(!entries.is_discarded() && entries.is_array(), "the github-action-benchmark export parses", action);
    expect(entries.size() == figures, "one entry per figure of each benchmark of the commit", action);
    const std::string bencher = exporter_named("bencher").serialize(real.points, request);
    const auto benchmarks = nlohmann::json::parse(bencher, nullptr, false);
    expect(!benchmarks.is_discarded() && benchmarks.is_object(), "the Bencher export parses", bencher);
    std::set<std::string> names;
    for (const Point* q : selected) names.insert(benchmark_name(*q));
    expect(benchmarks.size() == names.size(), "one Bencher benchmark per scenario and machine", bencher);
    break;
  }
  return 0;
}
