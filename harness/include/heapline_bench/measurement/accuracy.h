// The accuracy figure of a point (docs/design.md, "The accuracy figure"):
// the library's stated bound against its error on the scenario's reduced
// command. Two runs of a many-threaded scenario differ by more than the
// bound on their own (large-4t's reduced command: 4 MiB apart against a
// 0.7 MiB bound), so the exact peak must be the batched run's own: the run
// is made once under libheapline_accuracy.so, the library built with an
// exact counter beside its batched figures (interposer/src/accounting/exact_shadow.h),
// whose report holds both.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "heapline_bench/measurement/process_runner.h"

namespace heapline::bench {

struct Accuracy {
  std::int64_t batched_peak_bytes = 0;
  std::int64_t exact_peak_bytes = 0;
  std::int64_t bound_bytes = 0;  // the batched report's precision.bound_bytes
  bool operator==(const Accuracy&) const = default;
  std::int64_t error_bytes() const { return batched_peak_bytes - exact_peak_bytes; }
  // The library's contract: |batched peak - exact peak| <= stated bound.
  bool within_bound() const { return error_bytes() <= bound_bytes && -error_bytes() <= bound_bytes; }
};

// What one accuracy run tells beyond the point's figure (heapline-bench
// accuracy prints it): the budget the library states it keeps the bound
// within at this peak (max(floor, peak / divisor), docs/design.md "The
// precision budget"; 0 when the report predates it) and how often it
// published.
struct AccuracyRun {
  Accuracy accuracy;
  std::int64_t budget_bytes = 0;
  std::uint64_t publishes = 0;
  std::uint64_t calls = 0;  // allocations, frees and reallocs
  bool bound_within_budget() const { return budget_bytes == 0 || accuracy.bound_bytes <= budget_bytes; }
  double publishes_per_1000_calls() const { return calls == 0 ? 0.0 : 1000.0 * static_cast<double>(publishes) / static_cast<double>(calls); }
};

// The accuracy build beside a library: DIR/libheapline_accuracy.so for
// DIR/libheapline.so, when that file exists; "" otherwise (a library of
// another name, a list A:B, an older build without it).
std::string accuracy_library_for(const std::string& library);

struct AccuracyRequest {
  std::vector<std::string> command;        // the reduced command, resolved
  std::map<std::string, std::string> env;  // the scenario's environment
  std::string library;                     // libheapline_accuracy.so
  std::string report_path;                 // where its report goes (a scratch file)
};

// Runs the command once under the accuracy build and reads its report:
// the batched peak, the exact peak of the same run and the stated bound.
// Throws Refusal, naming the command, when it fails or its report lacks
// the exact figures; it says why, not what the caller keeps (the suite
// keeps the point without its accuracy figure).
AccuracyRun measure_accuracy(ProcessRunner& runner, const AccuracyRequest& request);

}  // namespace heapline::bench
