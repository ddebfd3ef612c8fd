#include "profile_summary.h"

#include <filesystem>

#include "profile_export.h"
#include "report_summary.h"

namespace heapline::launcher {

std::string program_name(const ParsedReport& report) {
  const std::string name = terminal_text(std::filesystem::path(report.exe).filename().string(), 255);
  return name.empty() ? "?" : name;
}

std::string summarize_peak_profile(const ParsedReport& report, std::size_t max_sites, Symbolizer& symbolizer) {
  const std::optional<SamplingData>& sampling = report.sampling;
  if (!sampling || sampling->mean_bytes == 0 || !sampling->peak_profile) return "";
  const ProfileData& profile = *sampling->peak_profile;
  const std::vector<NamedSite> sites = name_sites(profile, symbolizer);
  std::string text = profile_text(profile, sites,
                                  "heapline: at the peak (" + program_name(report) + ", pid " +
                                      std::to_string(report.pid) + ")",
                                  max_sites, false, sampling->dropped);
  // Every line of the launcher's summary starts with its name.
  std::string prefixed;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find('\n', start);
    const std::string line = text.substr(start, end - start);
    prefixed += (line.rfind("heapline:", 0) == 0 ? "" : "heapline: ") + line + "\n";
    start = end == std::string::npos ? text.size() : end + 1;
  }
  if (sampling->unwinder == "none") prefixed += "heapline: (no stacks: no unwinder was available to the process)\n";
  return prefixed;
}

std::string summarize_tree_profile(const std::vector<TreeReport>& tree, Symbolizer& symbolizer, std::size_t max_sites) {
  if (tree.size() < 2) return "";
  const TreeSum sum = sum_over_time(tree);
  // Each process's share of that moment, in the sum's own terms (heap +
  // mapped, memory_over_time): the bound of the interval of its timeline
  // that holds the moment. The largest share names the process whose
  // sites are shown.
  std::size_t largest = 0;
  std::optional<MemoryPoint> largest_point;
  for (std::size_t i = 0; i < tree.size(); ++i) {
    const ParsedReport& report = tree[i].report;
    if (sum.peak_unix_ns < report.start_unix_ns) continue;
    const std::uint64_t t = sum.peak_unix_ns - report.start_unix_ns;
    for (const MemoryPoint& point : memory_over_time(report)) {
      if (point.t_ns < t) continue;
      if (!largest_point || point.most > largest_point->most) largest_point = point, largest = i;
      break;
    }
  }
  if (!largest_point) return "";
  const ParsedReport& report = tree[largest].report;
  std::string text = "heapline: the tree's largest moment (" + human_bytes(sum.peak_bytes) + "): process " +
                     std::to_string(report.pid) + " (" + program_name(report) + ") held up to " +
                     human_bytes(largest_point->most) + " of it";
  if (has_mapped_series(report)) {
    // A report whose profile names no mapping sites (an older library's)
    // explains the heap alone.
    const std::optional<SamplingData>& sampling = report.sampling;
    const bool heap_sites_only = sampling && sampling->peak_profile && sampling->peak_profile->mapped_bytes == 0 &&
                                 largest_point->mapped != 0;
    // Each part's most over the same interval: the figure before is at
    // most their sum (the values at the interval's end may be far below).
    text += " (heap up to " + human_bytes(largest_point->heap_most) + ", mapped up to " +
            human_bytes(largest_point->mapped_most) + (heap_sites_only ? "; the sites are the heap's)" : ")");
  }
  const std::string sites = summarize_peak_profile(report, max_sites, symbolizer);
  // The first report's sites are printed just before this line; a
  // process without a peak profile (sampling off) has none to point to.
  if (largest == 0) return text + (sites.empty() ? "\n" : "; its sites are above\n");
  return text + "\n" + sites;
}

std::optional<std::string> top_peak_site(const ParsedReport& report, Symbolizer& symbolizer) {
  const std::optional<SamplingData>& sampling = report.sampling;
  if (!sampling || !sampling->peak_profile || sampling->peak_profile->sites.empty()) return std::nullopt;
  const ProfileData& profile = *sampling->peak_profile;
  const ProfileSiteData& site = profile.sites.front();
  const std::string where = site.frames.empty() ? std::string("(no stack)")
                                                : symbolizer.name(profile, site.frames.front()).text();
  return where + ": " + estimate_text(site.bytes, site.error_bytes);
}

}  // namespace heapline::launcher
