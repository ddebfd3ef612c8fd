// check and calibrate: the regression verdicts and the noise they rest on.
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.h"
#include "heapline_bench/verdicts/calibration.h"
#include "heapline_bench/measurement/catalogue.h"
#include "heapline_bench/reports/percent_format.h"
#include "heapline_bench/history/history.h"
#include "heapline_bench/measurement/machine.h"
#include "heapline_bench/history/point.h"
#include "heapline_bench/history/store.h"
#include "heapline_bench/verdicts/change_points.h"
#include "heapline_bench/verdicts/verdict.h"
#include "progress.h"
#include "request_builder.h"
#include "scratch_directory.h"

namespace heapline::bench {
namespace {

// GitHub's workflow commands take their message after "::"; newlines and
// percent signs must be escaped or the runner cuts the message.
std::string github_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '%') out += "%25";
    else if (c == '\r') out += "%0D";
    else if (c == '\n') out += "%0A";
    else out += c;
  }
  return out;
}

std::string short_commit(const std::string& commit) { return commit.empty() ? "(no commit)" : commit.substr(0, 7); }

}  // namespace

VerdictRule verdict_rule(const VerdictOptions& options, int scenarios) {
  VerdictRule rule;
  rule.window = options.window;
  rule.min_history = options.min_history;
  rule.false_alarm_rate = options.false_alarm_rate;
  rule.min_effect = options.min_effect_points / 100;
  rule.scenarios = scenarios;
  if (rule.window < 2 || rule.min_history < 2 || rule.min_history > rule.window)
    throw Refusal("--window and --min-history must be at least 2, and --min-history at most --window.");
  if (!(options.min_effect_points >= 0 && options.min_effect_points <= 100))
    throw Refusal("--min-effect must be a number of percentage points between 0 and 100.");
  if (!(rule.false_alarm_rate > 0 && rule.false_alarm_rate < 1))
    throw Refusal("--false-alarm-rate must be between 0 and 1.");
  return rule;
}

int run_check(const CheckOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const Store store(store_directory(options.store, options.where));
  const History history = read_history(store.points_path());
  for (const auto& problem : history.problems) std::cerr << "heapline-bench: warning: " << problem.describe() << "\n";
  std::vector<std::string> calibration_problems;
  const auto calibrations = read_calibrations(store.calibration_path(), calibration_problems);
  for (const auto& problem : calibration_problems) std::cerr << "heapline-bench: warning: " << problem << "\n";

  const VerdictRule rule = verdict_rule(options.rule, static_cast<int>(catalogue.scenarios.size()));
  const auto verdicts = judge_newest(history, catalogue.names(), rule, calibrations);
  const auto changes = history_change_points(history, catalogue.names());

  std::ostringstream table;
  table << "| Scenario | Commit | Overhead | Baseline (median of n) | Change | Threshold | Verdict |\n"
           "|---|---|---:|---:|---:|---:|---|\n";
  int regressions = 0;
  for (const auto& v : verdicts) {
    const auto& p = *v.point;
    table << "| `" << v.scenario << "` | `" << short_commit(p.commit) << "` | "
          << format_overhead(p.overhead, {p.low, p.high}) << " | ";
    if (v.verdict == Verdict::insufficient_history) {
      table << "– (" << v.history << " earlier points) | – | – | insufficient history |\n";
      continue;
    }
    table << format_percent(v.baseline) << "% (" << v.history << ") | " << format_percent(v.change) << " pts | ±"
          << format_percent(v.threshold, false) << " pts | **" << verdict_name(v.verdict) << "** |\n";
    if (v.verdict == Verdict::regression) ++regressions;
    if (options.github && v.verdict != Verdict::unchanged) {
      const std::string message = v.scenario + " at " + short_commit(p.commit) + ": " + format_percent(p.overhead) +
                                  "% against a baseline of " + format_percent(v.baseline) + "% over " +
                                  std::to_string(v.history) + " points (threshold " + format_percent(v.threshold) + " pts)";
      std::cout << (v.verdict == Verdict::regression ? "::error title=Overhead regression::" : "::notice title=Overhead improvement::")
                << github_escape(message) << "\n";
    }
  }
  std::ostringstream change_text;
  for (const auto& c : changes)
    change_text << "- `" << c.scenario << "` on `" << c.fingerprint << "`: " << format_percent(c.change.before) << "% → "
                << format_percent(c.change.after) << "% between `" << short_commit(c.last_before->commit) << "` and `"
                << short_commit(c.first_after->commit) << "` (p = " << c.change.p_value << ")\n";

  std::ostringstream report;
  report << "### Overhead verdicts\n\n" << table.str() << "\nRule: the newest point against the median of up to "
         << rule.window << " earlier points of the same scenario and machine; threshold = max(" << format_percent(rule.min_effect, false)
         << " pts, t × noise); false-alarm rate " << rule.false_alarm_rate << " per push over "
         << rule.scenarios << " scenarios.\n";
  if (!changes.empty()) report << "\n### Change points\n\n" << change_text.str();
  std::cout << report.str();

  if (options.github) {
    if (const char* summary = std::getenv("GITHUB_STEP_SUMMARY"); summary != nullptr && *summary != '\0')
      std::ofstream(summary, std::ios::app) << report.str() << "\n";
  }
  if (regressions > 0) std::cerr << "check: " << regressions << " regression(s)\n";
  return regressions > 0 && options.fail_on_regression ? kExitRefused : kExitOk;
}

int run_calibrate(const CalibrateOptions& options) {
  const Catalogue catalogue = load_catalogue(options.where.catalogue);
  const std::vector<const Scenario*> selected = selected_scenarios(catalogue, options.only);
  if (options.repeats < 3) throw Refusal("--repeats must be at least 3: a spread needs a few figures.");
  const VerdictRule rule = verdict_rule(options.rule, static_cast<int>(catalogue.scenarios.size()));
  const std::string library =
      checked_preload_library(options.library.empty() ? options.where.bin_dir + "/libheapline.so" : options.library);
  const Store store(store_directory(options.store, options.where));
  const Machine machine = this_machine();

  PosixProcessRunner runner;
  std::string lines;
  std::cout << "| Scenario | A/A spread | Repeat spread | Noise (sigma) | Threshold | Detectable (80%) |\n"
               "|---|---:|---:|---:|---:|---:|\n";
  for (const Scenario* scenario : selected) {
    ScratchDirectory scratch;
    ProgressLine progress("calibrate ");
    auto show = [&](const ProgressEvent& e) { progress.show(e); };
    std::vector<double> aa, repeated;
    for (int r = 0; r < options.repeats; ++r) {
      // A/A: the library on both sides; the figure should be 0.
      auto same = build_request(*scenario, options.where, "none", options.runs, options.scale, {}, scratch.path());
      same.env["LD_PRELOAD"] = library;
      aa.push_back(measure(runner, same, show).overhead);
      auto real = build_request(*scenario, options.where, library, options.runs, options.scale, {}, scratch.path());
      repeated.push_back(measure(runner, real, show).overhead);
    }
    progress.clear();
    const auto c = summarise_calibration(scenario->name, aa, repeated, rule);
    std::cout << "| `" << c.scenario << "` | ±" << format_percent(robust_sigma(aa), false) << " | ±"
              << format_percent(robust_sigma(repeated), false) << " | " << format_percent(c.sigma, false) << " pts | "
              << format_percent(c.threshold, false) << " pts | " << format_percent(c.detectable, false) << " pts |\n";
    std::cout.flush();
    lines += calibration_to_json(c, machine.fingerprint(), machine.describe(), options.runs, utc_now_iso8601()).dump() +
             "\n";
  }
  store.append_lines(store.calibration_path(), lines);
  std::cerr << "calibrate: appended to " << store.calibration_path() << " (machine " << machine.fingerprint()
            << ")\n";
  return kExitOk;
}

}  // namespace heapline::bench
