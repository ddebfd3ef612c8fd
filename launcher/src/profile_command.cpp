#include "profile_command.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <stdexcept>

#include <heapline/atomic_file.h>
#include <heapline/profile_reader.h>
#include <nlohmann/json.hpp>

#include "profile_export.h"
#include "report_summary.h"

namespace heapline::launcher {

namespace {

nlohmann::json read_report(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  nlohmann::json report = nlohmann::json::parse(in, nullptr, false);
  if (report.is_discarded() || !report.is_object() || report.value("format", std::string()) != "heapline/1") {
    throw std::runtime_error(path + ": not a heapline/1 report");
  }
  return report;
}

std::string program_name(const nlohmann::json& report) {
  const std::string name = std::filesystem::path(report.value("exe", std::string())).filename().string();
  return name.empty() ? "?" : name;
}

// The profile asked for, or why there is none.
const format::ProfileData& chosen_profile(const std::optional<format::SamplingData>& sampling, const std::string& at,
                                          const std::string& path) {
  if (!sampling) throw std::runtime_error(path + ": no heap profile (written by a heapline without the sampler)");
  if (sampling->mean_bytes == 0) throw std::runtime_error(path + ": no heap profile (HEAPLINE_SAMPLE=off)");
  const std::optional<format::ProfileData>& profile = at == "exit" ? sampling->exit_profile : sampling->peak_profile;
  if (!profile) {
    throw std::runtime_error(path + ": no " + at + " profile (no sampled block was live " +
                             (at == "exit" ? "at exit)" : "at a peak)"));
  }
  return *profile;
}

}  // namespace

int run_profile(const ProfileOptions& options) {
  try {
    const nlohmann::json report = read_report(options.report);
    const std::optional<format::SamplingData> sampling = format::read_sampling(report, options.report);
    const format::ProfileData& profile = chosen_profile(sampling, options.at, options.report);
    Symbolizer symbolizer;
    const std::vector<NamedSite> sites = name_sites(profile, symbolizer);
    const std::string title = std::string(options.at == "exit" ? "exit profile" : "peak profile") + " of " +
                              program_name(report) + " (pid " + std::to_string(report.value("pid", 0)) + ")";
    std::string output;
    if (options.format == "text") {
      output = profile_text(profile, sites, title, options.sites, true);
    } else if (options.format == "folded") {
      output = profile_folded(sites, program_name(report));
    } else {
      if (options.out.empty() || options.out == "-") {
        throw std::runtime_error("--format pprof writes a binary file: give it with -o FILE");
      }
      output = profile_pprof(profile, sites);
    }
    for (const std::string& problem : symbolizer.problems()) std::cerr << "heapline profile: " << problem << "\n";
    if (options.out.empty() || options.out == "-") {
      std::cout << output << std::flush;
    } else {
      write_file_atomically(options.out, output);
    }
    return 0;
  } catch (const std::exception& error) {
    std::cerr << "heapline profile: " << error.what() << "\n";
    return 1;
  }
}

std::string summarize_peak_profile(const nlohmann::json& report, const std::string& path, std::size_t max_sites,
                                   Symbolizer& symbolizer) {
  try {
    const std::optional<format::SamplingData> sampling = format::read_sampling(report, path);
    if (!sampling || sampling->mean_bytes == 0 || !sampling->peak_profile) return "";
    const format::ProfileData& profile = *sampling->peak_profile;
    const std::vector<NamedSite> sites = name_sites(profile, symbolizer);
    std::string text = profile_text(profile, sites, "heapline: at the peak (" + program_name(report) + ", pid " +
                                                        std::to_string(report.value("pid", 0)) + ")",
                                    max_sites, false);
    // Every line of the launcher's summary starts with its name.
    std::string prefixed;
    std::size_t start = 0;
    while (start < text.size()) {
      const std::size_t end = text.find('\n', start);
      const std::string line = text.substr(start, end - start);
      prefixed += (line.rfind("heapline:", 0) == 0 ? "" : "heapline: ") + line + "\n";
      start = end == std::string::npos ? text.size() : end + 1;
    }
    if (sampling->unwinder == "none") prefixed += "heapline: (no stacks: libunwind8 was not available to the process)\n";
    return prefixed;
  } catch (const std::exception& error) {
    return std::string("heapline: no peak profile: ") + error.what() + "\n";
  }
}

std::string summarize_tree_profile(const std::vector<TreeReport>& tree, Symbolizer& symbolizer, std::size_t max_sites) {
  if (tree.size() < 2) return "";
  const TreeSum sum = sum_over_time(tree);
  // Each process's share of that moment: the largest heap of the interval
  // of its timeline that holds it.
  std::size_t largest = 0;
  std::int64_t largest_bytes = -1;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const nlohmann::json& report = tree[i].report;
    const std::uint64_t start = report.value("start_unix_ns", std::uint64_t{0});
    if (sum.peak_unix_ns < start) continue;
    const std::uint64_t t = sum.peak_unix_ns - start;
    const auto& samples = report.at("samples");
    if (samples.empty() || samples.back()[0].get<std::uint64_t>() < t) continue;
    for (const auto& sample : samples) {
      if (sample[0].get<std::uint64_t>() < t) continue;
      const std::int64_t held = sample[2].get<std::int64_t>();
      if (held > largest_bytes) largest_bytes = held, largest = i;
      break;
    }
  }
  if (largest_bytes < 0) return "";
  const nlohmann::json& report = tree[largest].report;
  std::string text = "heapline: the tree's largest moment (" + human_bytes(sum.peak_bytes) + "): process " +
                     std::to_string(report.value("pid", 0)) + " (" + program_name(report) + ") held " +
                     human_bytes(largest_bytes) + " of it";
  if (largest == 0) return text + "; its sites are above\n";
  text += "\n";
  return text + summarize_peak_profile(report, tree[largest].path, max_sites, symbolizer);
}

std::optional<std::string> top_peak_site(const nlohmann::json& report, const std::string& path, Symbolizer& symbolizer) {
  try {
    const std::optional<format::SamplingData> sampling = format::read_sampling(report, path);
    if (!sampling || !sampling->peak_profile || sampling->peak_profile->sites.empty()) return std::nullopt;
    const format::ProfileData& profile = *sampling->peak_profile;
    NamedSite top{&profile.sites.front(), {}};
    for (const format::ProfileFrameData& frame : profile.sites.front().frames) {
      top.frames.push_back(symbolizer.name(profile, frame));
      if (top.frames.size() == 1) break;
    }
    return (top.frames.empty() ? std::string("(no stack)") : top.frames[0].text()) + ": " +
           estimate_text(top.site->bytes, top.site->error_bytes);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace heapline::launcher
