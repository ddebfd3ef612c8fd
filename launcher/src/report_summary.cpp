#include "report_summary.h"

#include <cstdio>

namespace heapline::launcher {

std::string human_bytes(std::int64_t bytes) {
  static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const bool negative = bytes < 0;
  double value = negative ? -static_cast<double>(bytes) : static_cast<double>(bytes);
  std::size_t unit = 0;
  while (value >= 1024 && unit + 1 < std::size(kUnits)) {
    value /= 1024;
    ++unit;
  }
  char text[64];
  if (unit == 0) {
    std::snprintf(text, sizeof text, "%s%.0f B", negative ? "-" : "", value);
  } else {
    std::snprintf(text, sizeof text, "%s%.1f %s", negative ? "-" : "", value, kUnits[unit]);
  }
  return text;
}

std::optional<std::int64_t> peak_resident_bytes(const ParsedReport& report) {
  if (report.peak_rss_bytes) return report.peak_rss_bytes;
  if (report.resident) return report.resident->peak_bytes;
  return std::nullopt;
}

std::string human_resident(const ParsedReport& report) {
  const std::optional<std::int64_t> bytes = peak_resident_bytes(report);
  return bytes ? human_bytes(*bytes) : "-";
}

std::string human_seconds(std::int64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string summarize(const ParsedReport& report, const std::string& report_path) {
  std::string text = "heapline: peak " + human_bytes(report.peak_bytes) + " at " +
                     human_seconds(static_cast<std::int64_t>(report.peak_time_ns)) + ", final " +
                     human_bytes(report.final_bytes) + "\n";
  // Mapped memory (absent from reports older than it, "unknown" in one
  // converted from an older live file).
  if (report.mapped_on()) {
    text += "heapline: mapped peak " + human_bytes(report.mapped.peak_bytes) + " at " +
            human_seconds(static_cast<std::int64_t>(report.mapped.peak_time_ns)) + ", final " +
            human_bytes(report.mapped.final_bytes) + "; heap + mapped peak " + human_bytes(report.total.peak_bytes) +
            " at " + human_seconds(static_cast<std::int64_t>(report.total.peak_time_ns)) + ", final " +
            human_bytes(report.total.final_bytes) + "\n";
  }
  if (report.resident) {
    // The series' peak and when; the kernel's high-water mark beside it
    // also counts what rose and fell between two readings.
    const ParsedReport::Resident& resident = *report.resident;
    text += "heapline: resident set peak " + human_bytes(resident.peak_bytes) + " at " +
            human_seconds(static_cast<std::int64_t>(resident.peak_time_ns)) + ", final " +
            human_bytes(resident.final_bytes) + " (read at samples";
    if (report.peak_rss_bytes) text += "; the kernel's high-water mark " + human_bytes(*report.peak_rss_bytes);
    text += "): memory allocated but never written is not resident\n";
  } else if (report.peak_rss_bytes) {
    text += "heapline: peak resident set " + human_bytes(*report.peak_rss_bytes) +
            " (the kernel's high-water mark: memory allocated but never written is not resident)\n";
  }
  text += "heapline: precision ";
  if (report.precision.exact) {
    text += "exact";
  } else {
    const ParsedReport::Precision& precision = report.precision;
    text += "+/-" + human_bytes(static_cast<std::int64_t>(precision.bound_bytes));
    if (precision.budget_divisor > 0) {
      // The budget: the threads together hold back at most max(BYTES, peak / DIVISOR).
      text += " (batched: at most max(" + human_bytes(static_cast<std::int64_t>(precision.budget_floor_bytes)) +
              ", peak/" + std::to_string(precision.budget_divisor) + ") = " +
              human_bytes(static_cast<std::int64_t>(precision.budget_bytes)) + ")";
    } else {
      // A report written before the budget: the per-thread rule.
      const std::uint64_t threads = precision.max_threads;
      text += " (batched: " + std::to_string(threads) + (threads == 1 ? " thread x " : " threads x ") +
              human_bytes(static_cast<std::int64_t>(precision.max_threshold_bytes)) + ")";
    }
  }
  text += ", " + std::to_string(report.samples.size()) + " samples over " +
          human_seconds(static_cast<std::int64_t>(report.duration_ns)) + "\n";
  if (!report.live_file_problem.empty()) {
    // "live file not made: ...", "live file cut short by another process at ...".
    text += "heapline: live file " + terminal_text(report.live_file_problem) + "\n";
  }
  if (report.allocations_seen == false) {
    text += "heapline: the program's malloc is not libheapline's: these figures miss its allocations\n";
  }
  if (!report.ended_by_exit()) {
    text += "heapline: ended without exit";
    if (report.signal > 0) text += " (signal " + std::to_string(report.signal) + ")";
    text += "; last sample at " + human_seconds(static_cast<std::int64_t>(report.last_sample_ns)) +
            ", figures as of then\n";
  }
  if (!report.markers.empty()) {
    text += "heapline: " + std::to_string(report.markers.size()) + " marker" + (report.markers.size() == 1 ? "" : "s") +
            ":";
    for (const ReportMarker& marker : report.markers) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
      // on "literal" + std::string&& here.
      text += ' ';
      text += terminal_text(marker.name);
      text += " @ ";
      text += human_seconds(static_cast<std::int64_t>(marker.t_ns));
    }
    if (report.markers_dropped > 0) {
      text += "; " + std::to_string(report.markers_dropped) + " more placed after these, not kept (a report holds the first " +
              std::to_string(kLiveMarkerCapacity) + ")";
    }
    text += "\n";
  }
  text += "heapline: report " + terminal_text(report_path) + "\n";
  return text;
}

}  // namespace heapline::launcher
