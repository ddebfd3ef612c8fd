// render, validate, import and export: the subcommands that read or feed the store.
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>

#include <heapline/json_document.h>
#include <heapline/output_file.h>
#include <algorithm>
#include <map>

#include "command_line.h"
#include "commands.h"
#include "progress.h"
#include "heapline_bench/verdicts/calibration.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/measurement.h"
#include "heapline_bench/reports/comparison_export.h"
#include "heapline_bench/reports/exporter.h"
#include "heapline_bench/reports/render.h"
#include "heapline_bench/history/store.h"
#include "heapline_bench/text/regular_file.h"

namespace heapline::bench {
namespace {

// The docs' release comparison section, from the JSON that compare wrote
// (kept in the repository), or a paragraph that says how to make it.
void render_release_comparison(const std::string& json_path, const std::string& out_dir,
                               heapline::OutputFiles& outputs) {
  std::string markdown;
  std::error_code missing;
  if (!std::filesystem::exists(json_path, missing)) {
    markdown = "No release comparison has been measured on this checkout yet: `tools/compare_releases.sh REF_A "
               "REF_B -- --write-docs` measures one and writes `docs/release-comparison.json`.\n";
  } else {
    // The programs' one reader of a JSON document (heapline/json_document.h).
    const heapline::JsonDocument document =
        heapline::read_json_document(read_regular_file(json_path), json_path, "a release comparison");
    if (!document) throw std::runtime_error(document.error);
    try {
      markdown = comparison_markdown_from_json(document.value);
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(json_path + ": not a release comparison: " + heapline::json_library_problem(e));
    }
  }
  outputs.stage(out_dir + "/release-comparison.md", markdown);
}

}  // namespace

std::string store_directory(const std::string& option, const Locations& where) {
  return option.empty() ? where.work_dir + "/bench-data" : option;
}

Store existing_store(const std::string& option, const Locations& where) {
  Store store(store_directory(option, where));
  // A mistyped --store is not an empty store: an empty page or export from
  // it would look like a history that lost its points.
  std::error_code ec;
  if (!std::filesystem::is_directory(store.directory(), ec))
    throw Refusal("no store directory at " + store.directory() + " (a mistyped --store?).");
  return store;
}

Store appendable_store(const std::string& option, const Locations& where, const std::string& nothing_done) {
  std::error_code ec;
  if (!option.empty() && !std::filesystem::is_directory(option, ec))
    throw Refusal("no store directory at " + option + " (a mistyped --store? make the directory for a new store). " +
                  nothing_done);
  return Store(store_directory(option, where));
}

std::string keep_unstored(const Store& store, const std::string& what, const std::string& lines, const std::string& why,
                          const std::string& later) {
  std::string message = what + " could not be stored: " + why + ".\nIn full:\n" + lines;
  try {
    const std::string kept = store.keep_beside(lines);
    std::string command = later;
    command.replace(command.find("{file}"), 6, kept);
    message += "It was written to " + kept + "; to add it later: " + command;
  } catch (const std::runtime_error& e) {
    message += "It could not be written beside the store either (" + std::string(e.what()) + "): copy it from above.";
  }
  return message;
}

namespace {

RenderOptions render_options(const RenderCommandOptions& options) {
  RenderOptions render;
  render.out_dir = options.out.empty() ? options.where.work_dir + "/docs/_generated" : options.out;
  render.made_directories = options.out.empty() ? 2 : 1;
  render.draw_plots = options.plots;
  return render;
}

}  // namespace

void claim_render_command_outputs(const RenderCommandOptions& options, const Catalogue& catalogue,
                                  heapline::OutputFiles& outputs) {
  const Store store(store_directory(options.store, options.where));
  store.protect_from(outputs);
  outputs.reads("", options.where.catalogue);
  claim_render_outputs(catalogue, render_options(options), outputs);
}

int run_render(const RenderCommandOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const Store store = existing_store(options.store, options.where);
  Stopwatch stopwatch;
  RenderOptions render = render_options(options);
  // Every file of the render is checked before the work, and all are
  // renamed into place together at its end.
  heapline::OutputFiles outputs;
  claim_render_command_outputs(options, catalogue, outputs);
  // The whole store: the newest points may be anywhere in it (an import
  // appends older points after newer ones).
  const History history = read_history(store.points_to_read());
  // The page names its source relative to the checkout when it lies inside.
  const auto relative = std::filesystem::absolute(store.points_path()).lexically_normal().lexically_relative(
      std::filesystem::absolute(options.where.work_dir).lexically_normal());
  render.store_label = !relative.empty() && *relative.begin() != ".." ? relative.string() : store.points_path();
  render.table_commits = options.rows;
  render.rule.scenarios = static_cast<int>(catalogue.scenarios.size());
  std::vector<std::string> calibration_problems;
  render.calibrations = read_calibrations(store.calibrations_to_read(), calibration_problems);
  const RenderResult result = render_history(history, catalogue, render, &outputs);
  render_release_comparison(docs_comparison_path(options.where), render.out_dir, outputs);
  outputs.commit();
  const double seconds = stopwatch.lap();

  for (const auto& problem : history.problems) say("heapline-bench", "warning: " + problem.describe());
  if (const std::string outside = points_outside(history, catalogue.names()); !outside.empty())
    say("heapline-bench", "warning: " + outside + " are not shown");
  Say(std::cerr) << "render: " << history.entries.size() << " point(s), " << history.problems.size()
                 << " line(s) not shown, in " << static_cast<long>(seconds * 1000 + 0.5) << " ms\n";
  say_line(std::cout, "page:  " + terminal_text(result.page));
  if (!result.plots.empty())
    say_line(std::cout, "plots: " + terminal_text(result.plots.front().substr(0, result.plots.front().rfind('/') + 1)));
  if (!result.plot_note.empty()) say("heapline-bench", result.plot_note);
  return kExitOk;
}

Subcommand add_render_command(CLI::App& bench, const Locations& where) {
  return subcommand(bench, where, "render", "Write the performance page and its plots from the store", run_render,
                    [](CLI::App& app, RenderCommandOptions& options) { add_render_options(app, options); });
}

namespace {

struct ValidateOptions {
  Locations where;
  std::string store;
};

int run_validate(const ValidateOptions& options) {
  const Store store = existing_store(options.store, options.where);
  const std::string points = store.points_to_read(), calibration = store.calibrations_to_read();
  // The points are checked as they are read, not kept.
  std::vector<StoreProblem> problems;
  std::size_t valid = 0;
  int unterminated = 0;
  scan_points_file(points, RawTimes::read, [&](Point&&, int) { ++valid; }, problems, &unterminated);
  const auto duplicates =
      std::count_if(problems.begin(), problems.end(), [](const StoreProblem& p) { return p.kind == StoreProblem::Kind::duplicate; });
  for (const auto& problem : problems) {
    // The store's own rule for a cut last line (store.h).
    const bool cut = problem.kind == StoreProblem::Kind::incomplete;
    say_line(std::cerr, problem.describe() + (cut ? "; the next append moves it to a file beside the store" : ""));
  }
  // The store's own rule for a whole last point without its newline
  // (store.h): kept, and completed by the next append.
  if (unterminated != 0)
    say_line(std::cerr, points + ":" + std::to_string(unterminated) +
                            ": the last line lacks its newline; its point is whole and kept (the next append "
                            "completes it with the newline)");
  Say(std::cout) << terminal_text(store.points_path()) << ": " << valid << " valid point(s), "
                 << problems.size() - duplicates << " bad line(s), " << duplicates << " duplicate(s)\n";
  // The store's calibration is part of it (calibrate appends there, check
  // reads it): its lines are checked by the same rules.
  std::vector<std::string> calibration_problems;
  std::size_t calibrations = 0;
  std::error_code missing;
  if (std::filesystem::exists(calibration, missing)) {
    calibrations = read_calibrations(calibration, calibration_problems).size();
    for (const auto& problem : calibration_problems) say_line(std::cerr, problem);
    Say(std::cout) << terminal_text(store.calibration_path()) << ": " << calibrations << " calibration(s), "
                   << calibration_problems.size() << " bad line(s)\n";
  }
  return problems.empty() && calibration_problems.empty() ? kExitOk : kExitRefused;
}

}  // namespace

Subcommand add_validate_command(CLI::App& bench, const Locations& where) {
  return subcommand(bench, where, "validate", "Check every line of the store; list the bad ones", run_validate,
                    [](CLI::App& app, ValidateOptions& options) { add_store_option(app, options.store); });
}

namespace {

struct ExportOptions {
  Locations where;
  std::string store;
  std::string format = "csv";  // a name of export_formats() (reports/exporter.h)
  std::string commit;          // the one-commit formats: the points of this commit (default: the newest)
  std::string out;             // empty: standard output
};

int run_export(const ExportOptions& options) {
  // "-" is standard output, as without --out.
  const bool to_stdout = options.out.empty() || options.out == "-";
  heapline::OutputFiles outputs;
  if (!to_stdout) outputs.claim("--out " + options.out, options.out);
  const Store store = existing_store(options.store, options.where);
  store.protect_from(outputs);
  StoreContents contents = store.read();
  // Exporting part of the history silently would mislead the dashboard.
  if (!contents.problems.empty())
    throw Refusal("the store has unreadable lines (first: " + contents.problems.front().describe() +
                  "); fix them before exporting. Nothing was exported.");
  sort_by_measured_at(contents.points);
  std::string text;
  try {
    text = exporter_named(options.format).serialize(contents.points, {options.commit});
  } catch (const std::runtime_error& e) {
    throw Refusal(std::string(e.what()) + ". Nothing was exported.");
  }
  if (to_stdout) {
    // The export itself is data for a program, written as it is; on a
    // terminal it goes through the door of printed lines like any text.
    if (isatty(STDOUT_FILENO) != 0) {
      say_lines(std::cout, text);
    } else {
      std::cout << text;
    }
  } else {
    outputs.stage(options.out, text);
    outputs.commit();
    say("export", std::to_string(contents.points.size()) + " point(s) read, " + options.out + " written");
  }
  return kExitOk;
}

}  // namespace

Subcommand add_export_command(CLI::App& bench, const Locations& where) {
  // The formats as exporter.cpp's table lists them: a new one needs no line here.
  std::vector<std::string> format_names;
  std::string formats_help, names;
  for (const auto& format : export_formats()) {
    format_names.push_back(format.name);
    formats_help += (formats_help.empty() ? "" : "; ") + format.name + ": " + format.description;
    names += (names.empty() ? "" : ", ") + format.name;
  }
  return subcommand(
      bench, where, "export", "Write the history for another program, in one of its formats: " + names, run_export,
      [&](CLI::App& app, ExportOptions& options) {
        add_store_option(app, options.store);
        app.add_option("--format", options.format, formats_help)
            ->check(CLI::IsMember(format_names))
            ->capture_default_str();
        app.add_option("--commit", options.commit,
                       "github-action-benchmark, bencher: the commit (default: the newest point's)")
            ->check(check::commit);
        app.add_option("--out", options.out, "File to write (default: standard output)")->check(check::text);
      });
}

namespace {

struct ImportOptions {
  Locations where;
  std::string store;
  std::vector<std::string> files;
};

int run_import(const ImportOptions& options) {
  const Store store = appendable_store(options.store, options.where, "Nothing was imported.");
  std::vector<Point> incoming_points;
  for (const auto& file : options.files) {
    StoreContents incoming;
    try {
      incoming = read_points_file(file, RawTimes::read);
    } catch (const std::runtime_error& e) {
      throw Refusal(std::string(e.what()) + ". Nothing was imported.");
    }
    // A file that validate would refuse is not imported in part. One
    // problem (a file cut by an interrupted write) is one line.
    if (incoming.problems.size() == 1)
      throw Refusal("cannot import " + incoming.problems.front().describe() + ". Nothing was imported.");
    if (!incoming.problems.empty()) {
      std::string list;
      for (const auto& problem : incoming.problems) list += "\n  " + problem.describe();
      throw Refusal("cannot import " + file + ":" + list + "\nNothing was imported.");
    }
    incoming_points.insert(incoming_points.end(), incoming.points.begin(), incoming.points.end());
  }
  // The store is read for de-duplication under the append's lock: three
  // concurrent imports of the same file add its points once.
  std::size_t added = 0;
  try {
    added = store.append_new(incoming_points);
  } catch (const std::runtime_error& e) {
    throw Refusal(std::string(e.what()) + ". Nothing was imported.");
  }
  Say(std::cout) << "imported " << added << " point(s) into " << terminal_text(store.points_path()) << "\n";
  return kExitOk;
}

}  // namespace

Subcommand add_import_command(CLI::App& bench, const Locations& where) {
  return subcommand(bench, where, "import", "Append the points of an older store, skipping those already in",
                    run_import, [](CLI::App& app, ImportOptions& options) {
                      add_store_option(app, options.store);
                      app.add_option("FILE", options.files, "points.jsonl files of the older store")
                          ->required()
                          ->check(check::text & CLI::ExistingFile);
                    });
}

}  // namespace heapline::bench
