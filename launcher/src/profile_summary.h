// A report's heap profile in the launcher's summary and plot: the largest
// sites at the peak, named offline (symbolizer.h), and for a process tree
// which process held most of its largest moment.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include <heapline/report_reader.h>

#include "process_tree.h"
#include "symbolizer.h"

namespace heapline::launcher {

// The program's file name, for titles ("?" when the report has none).
std::string program_name(const ParsedReport& report);

// How many sites the launcher's summary shows, largest first.
constexpr std::size_t kSummarySites = 10;

// The launcher's summary lines for a report's peak profile: its `max_sites`
// largest sites, named; "" when the report has no profile.
std::string summarize_peak_profile(const ParsedReport& report, std::size_t max_sites, Symbolizer& symbolizer);

// The tree's largest moment (process_tree.h, sum_over_time): which
// process held most of it, and that process's largest sites at its own
// peak, when it is not the command (whose sites the summary shows first).
// "" for a single process.
std::string summarize_tree_profile(const std::vector<TreeReport>& tree, Symbolizer& symbolizer, std::size_t max_sites);

// The largest site at the peak, named ("site_a (x.cpp:40): 58.0 MiB ± 6.0
// MiB"); nullopt without a profile.
std::optional<std::string> top_peak_site(const ParsedReport& report, Symbolizer& symbolizer);

}  // namespace heapline::launcher
