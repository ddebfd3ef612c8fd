// heapline profile REPORT: a report's heap profile, named offline, as text,
// folded stacks or pprof's profile.proto (profile_export.h).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "process_tree.h"
#include "symbolizer.h"

namespace heapline::launcher {

struct ProfileOptions {
  std::string report;
  std::string format = "text";  // text | folded | pprof
  std::string out;              // "" or "-": stdout (not for pprof)
  std::string at = "peak";      // peak | exit
  std::size_t sites = 20;       // text: how many sites
};

// Writes the profile; returns the exit status (1 with one line on stderr
// naming the file and what is wrong).
int run_profile(const ProfileOptions& options);

// The launcher's summary lines for a report's peak profile: its `max_sites`
// largest sites, named; "" when the report has no profile. A malformed
// profile gives one line saying so.
std::string summarize_peak_profile(const nlohmann::json& report, const std::string& path, std::size_t max_sites,
                                   Symbolizer& symbolizer);

// The tree's largest moment (process_tree.h, sum_over_time): which
// process held most of it, and that process's largest sites at its own
// peak, when it is not the command (whose sites the summary shows first).
// "" for a single process.
std::string summarize_tree_profile(const std::vector<TreeReport>& tree, Symbolizer& symbolizer, std::size_t max_sites);

// The largest site at the peak, named ("site_a (x.cpp:40)"); nullopt
// without a profile.
std::optional<std::string> top_peak_site(const nlohmann::json& report, const std::string& path, Symbolizer& symbolizer);

}  // namespace heapline::launcher
