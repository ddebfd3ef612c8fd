#include "heapline_bench/measurement/accuracy.h"

#include <algorithm>
#include <filesystem>

#include <heapline/precision_budget_rule.h>
#include <heapline/report_reader.h>

#include "heapline_bench/measurement/measurement.h"

namespace heapline::bench {

namespace fs = std::filesystem;

std::string accuracy_library_for(const std::string& library) {
  const fs::path path(library);
  if (library.find(':') != std::string::npos || path.filename() != "libheapline.so") return "";
  const fs::path beside = path.parent_path() / "libheapline_accuracy.so";
  std::error_code error;
  return fs::is_regular_file(beside, error) ? beside.string() : "";
}

AccuracyRun measure_accuracy(ProcessRunner& runner, const AccuracyRequest& request) {
  RunSpec spec;
  spec.argv = request.command;
  spec.env = request.env;
  spec.settings_from_env_only = true;
  set_preload(spec.env, {request.library});
  spec.env["HEAPLINE_OUT"] = request.report_path;
  // ld.so's trace and the live files go beside the report, in the run's
  // scratch directory: whether the library was loaded into the program is
  // told as every measurement tells it (library_not_loaded).
  const std::string scratch = fs::path(request.report_path).parent_path().string();
  const std::string trace_prefix = scratch + "/accuracy-ld-trace";
  spec.ld_debug_output = trace_prefix;
  const RunResult result = runner.run(spec);
  const std::string what = "the accuracy run of " + request.command[0] + " under " + request.library;
  if (!result.succeeded())
    throw Refusal(what + " failed: it " + how_it_ended_and_said(result));
  const LoadEvidence seen{trace_prefix, result.pid, exec_note_left(scratch), {}};
  if (const std::string absent = library_not_loaded(request.library, request.command[0], seen); !absent.empty())
    throw Refusal(absent);
  const heapline::ReportReading reading = heapline::read_report_file(request.report_path);
  if (!reading) throw Refusal(what + ": " + reading.error);
  const heapline::ParsedReport& report = *reading.report;
  if (!report.exact_shadow)
    throw Refusal(what + ": its report " + request.report_path +
                  " has no exact_shadow (not an accuracy build?)");
  AccuracyRun run;
  run.accuracy.batched_peak_bytes = report.peak_bytes;
  run.accuracy.exact_peak_bytes = report.exact_shadow->peak_bytes;
  run.accuracy.bound_bytes = static_cast<std::int64_t>(report.precision.bound_bytes);
  const auto& precision = report.precision;
  if (precision.budget_divisor != 0)
    run.budget_bytes = static_cast<std::int64_t>(
        heapline::precision_budget_bytes(precision.budget_floor_bytes, precision.budget_divisor, report.peak_bytes));
  run.publishes = report.publishes;
  run.calls = report.calls.alloc + report.calls.free + report.calls.realloc;
  return run;
}

}  // namespace heapline::bench
