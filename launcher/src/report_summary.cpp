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

std::string human_seconds(std::int64_t ns) {
  char text[64];
  std::snprintf(text, sizeof text, "%.3f s", static_cast<double>(ns) / 1e9);
  return text;
}

std::string summarize(const nlohmann::json& report, const std::string& report_path) {
  const auto& precision = report.at("precision");
  std::string text = "heapline: peak " + human_bytes(report.at("peak_bytes").get<std::int64_t>()) + " at " +
                     human_seconds(report.at("peak_time_ns").get<std::int64_t>()) + ", final " +
                     human_bytes(report.at("final_bytes").get<std::int64_t>()) + "\n";
  // Mapped memory (absent from reports older than it, "unknown" in one
  // converted from an older live file).
  if (report.contains("mapped") && report.at("mapped").value("mode", std::string()) == "on") {
    const auto& mapped = report.at("mapped");
    const auto& total = report.at("total");
    text += "heapline: mapped peak " + human_bytes(mapped.at("peak_bytes").get<std::int64_t>()) + " at " +
            human_seconds(mapped.at("peak_time_ns").get<std::int64_t>()) + ", final " +
            human_bytes(mapped.at("final_bytes").get<std::int64_t>()) + "; heap + mapped peak " +
            human_bytes(total.at("peak_bytes").get<std::int64_t>()) + " at " +
            human_seconds(total.at("peak_time_ns").get<std::int64_t>()) + ", final " +
            human_bytes(total.at("final_bytes").get<std::int64_t>()) + "\n";
  }
  text += "heapline: precision ";
  if (precision.at("mode") == "exact") {
    text += "exact";
  } else {
    text += "+/-" + human_bytes(precision.at("bound_bytes").get<std::int64_t>());
    if (precision.value("budget_divisor", std::int64_t{0}) > 0) {
      // The budget: the threads together hold back at most max(BYTES, peak / DIVISOR).
      text += " (batched: at most max(" + human_bytes(precision.at("budget_floor_bytes").get<std::int64_t>()) +
              ", peak/" + std::to_string(precision.at("budget_divisor").get<std::int64_t>()) + ") = " +
              human_bytes(precision.at("budget_bytes").get<std::int64_t>()) + ")";
    } else if (precision.contains("max_threads") && precision.contains("max_threshold_bytes")) {
      // A report written before the budget: the per-thread rule.
      text += " (batched: " + std::to_string(precision.at("max_threads").get<std::int64_t>()) +
              (precision.at("max_threads").get<std::int64_t>() == 1 ? " thread x " : " threads x ") +
              human_bytes(precision.at("max_threshold_bytes").get<std::int64_t>()) + ")";
    }
  }
  text += ", " + std::to_string(report.at("samples").size()) + " samples over " +
          human_seconds(report.at("duration_ns").get<std::int64_t>()) + "\n";
  if (report.value("allocations_seen", true) == false) {
    text += "heapline: the program's malloc is not libheapline's: these figures miss its allocations\n";
  }
  if (report.value("ended", std::string("exit")) != "exit") {
    text += "heapline: ended without exit";
    if (report.contains("signal")) text += " (signal " + std::to_string(report.at("signal").get<int>()) + ")";
    text += "; last sample at " + human_seconds(report.value("last_sample_ns", std::int64_t{0})) +
            ", figures as of then\n";
  }
  if (report.contains("markers") && !report.at("markers").empty()) {
    text += "heapline: " + std::to_string(report.at("markers").size()) + " marker" +
            (report.at("markers").size() == 1 ? "" : "s") + ":";
    for (const auto& marker : report.at("markers")) {
      // Appended piece by piece: GCC 12 warns (-Wrestrict, a false positive)
      // on "literal" + std::string&& here.
      text += ' ';
      text += marker[1].get<std::string>();
      text += " @ ";
      text += human_seconds(marker[0].get<std::int64_t>());
    }
    text += "\n";
  }
  text += "heapline: report " + report_path + "\n";
  return text;
}

}  // namespace heapline::launcher
