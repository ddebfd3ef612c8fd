// heapline profile REPORT: a report's heap profile, its frames named
// offline, as text, folded stacks or pprof's profile.proto
// (profile_export.h).
#include <iostream>
#include <memory>
#include <stdexcept>

#include <heapline/output_file.h>
#include <heapline/report_reader.h>

#include <heapline/option_checks.h>

#include "commands/subcommand.h"
#include "profile_export.h"
#include "profile_summary.h"
#include "symbolizer.h"

namespace heapline::launcher {

namespace {

// The help says the defaults the options take: one value each.
constexpr std::size_t kDefaultSites = 20;
// Far above the sites any report holds (a peak profile keeps 64): a larger
// number would show the same table, so it is refused as a typo.
constexpr long long kMostSites = 100000;

struct ProfileOptions {
  std::string report;
  std::string format = "text";       // text | folded | pprof
  std::string out;                   // not given, or "-": stdout (not for pprof)
  bool out_given = false;
  std::string at = "peak";           // peak | exit
  std::size_t sites = kDefaultSites;  // text: how many sites
};

// The profile asked for, or why there is none: each reason as the report
// tells it, never a guess (a report converted from a live file has no
// "sampling" whether the sampler was off or the process died before it
// kept a sample; a process that never exited has no exit profile).
const ProfileData& chosen_profile(const ParsedReport& report, const std::string& at) {
  const std::string& path = report.path;
  if (!report.sampling) {
    if (!report.ended_by_exit()) {
      throw std::runtime_error(path + ": no heap profile (converted from a live file that kept none: the heap "
                                      "sampler was off, or the process ended before it kept a sample)");
    }
    throw std::runtime_error(path + ": no heap profile (the report has no \"sampling\": written by a heapline "
                                    "without the sampler)");
  }
  if (report.sampling->mean_bytes == 0) throw std::runtime_error(path + ": no heap profile (the heap sampler was off: run with heapline --profile, or HEAPLINE_SAMPLE=on)");
  if (at == "exit" && !report.ended_by_exit()) {
    const std::string how =
        report.ended == kEndedRunning
            ? "the process was still running when its live file was converted"
            : "the process ended without exit" +
                  (report.signal > 0 ? " (signal " + std::to_string(report.signal) + ")" : std::string());
    throw std::runtime_error(path + ": no exit profile (" + how + "); --at peak shows its latest peak profile");
  }
  const std::optional<ProfileData>& profile =
      at == "exit" ? report.sampling->exit_profile : report.sampling->peak_profile;
  if (!profile) {
    throw std::runtime_error(path + ": no " + at + " profile (no sampled block was live " +
                             (at == "exit" ? "at exit)" : "at a peak)"));
  }
  return *profile;
}

int write_profile(const ProfileOptions& options) {
  try {
    const bool to_stdout = !options.out_given || options.out == "-";
    if (options.format == "pprof" && to_stdout) {
      say("heapline profile", "--format pprof writes a binary file: give it with -o FILE");
      return kUsageError;
    }
    // The output is checked before the report is read and named: a
    // refusal of the command line, status 2.
    OutputFiles outputs;
    try {
      outputs.reads(options.report, options.report);
      if (!to_stdout) outputs.claim("-o " + (options.out.empty() ? "''" : options.out), options.out);
    } catch (const OutputRefused& refused) {
      say("heapline profile", refused.what());
      return kUsageError;
    }
    ReportReading reading = read_report_file(options.report);
    if (!reading) throw std::runtime_error(reading.error);
    const ParsedReport& report = *reading.report;
    const ProfileData& profile = chosen_profile(report, options.at);
    Symbolizer symbolizer;
    const std::vector<NamedSite> sites = name_sites(profile, symbolizer);
    const std::string title = std::string(options.at == "exit" ? "exit profile" : "peak profile") + " of " +
                              program_name(report) + " (pid " + std::to_string(report.pid) + ")";
    std::string output;
    if (options.format == "text") {
      output = profile_text(profile, sites, title, options.sites, true,
                            report.sampling ? report.sampling->dropped : 0);
    } else if (options.format == "folded") {
      output = profile_folded(sites, program_name(report));
    } else {
      output = profile_pprof(profile, sites);
    }
    for (const std::string& problem : symbolizer.problems()) say("heapline profile", problem);
    if (to_stdout) {
      // Text for a terminal or a pipe: through the launcher's door, line by
      // line (frames are named from the binaries' own strings).
      say_lines(std::cout, output);
      std::cout << std::flush;
    } else {
      outputs.stage(options.out, output);
      outputs.commit();
    }
    return 0;
  } catch (const std::exception& error) {
    say("heapline profile", error.what());
    return 1;
  }
}

}  // namespace

Subcommand add_profile_command(CLI::App& heapline) {
  CLI::App* app = heapline.add_subcommand(
      "profile", "the call sites that held the heap at the peak (or at exit), from a heapline/1 report, named offline");
  auto options = std::make_shared<ProfileOptions>();
  app->add_option("REPORT", options->report, "the heapline/1 report")->required()->check(heapline::option_checks::name());
  app->add_option("--format", options->format,
                  "text (the default), folded (stacks for flame graphs), or pprof (gzipped profile.proto for "
                  "go tool pprof)")
      ->check(CLI::IsMember({"text", "folded", "pprof"}));
  CLI::Option* out_option =
      app->add_option("-o,--out", options->out, "the output file (default, or -: stdout; pprof needs one)");
  app->add_option("--at", options->at, "peak (the default) or exit (what was never freed)")
      ->check(CLI::IsMember({"peak", "exit"}));
  app->add_option("--sites", options->sites, "text: how many sites (default " + std::to_string(kDefaultSites) + ")")
      ->transform(heapline::option_checks::whole_number(1, kMostSites));
  return {app, [options, out_option] {
            options->out_given = out_option->count() > 0;
            return write_profile(*options);
          }};
}

}  // namespace heapline::launcher
