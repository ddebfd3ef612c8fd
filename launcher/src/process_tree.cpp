#include "process_tree.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <system_error>

#include "live_view.h"
#include "output_naming.h"
#include "report_summary.h"
#include "stale_files.h"

namespace fs = std::filesystem;

namespace heapline::launcher {

namespace {

std::uint64_t start_of(const ParsedReport& report) { return report.start_unix_ns; }

std::string program_of(const ParsedReport& report) {
  const std::string name = fs::path(report.exe).filename().string();
  return name.empty() ? "?" : printable_text(name, 64);
}

}  // namespace

std::vector<TreeReport> find_child_reports(const std::string& plain_path, std::uint64_t since_unix_ns,
                                           std::vector<std::string>& notes) {
  const fs::path plain = fs::absolute(plain_path);
  std::error_code error;
  fs::directory_iterator entries(plain.parent_path(), error);
  if (error) return {};
  std::vector<fs::path> reports, lives;
  for (const fs::directory_entry& entry : entries) {
    const std::string name = entry.path().string();
    if (pid_of_inserted_path(plain.string(), name) > 0) reports.push_back(entry.path());
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".live") == 0 &&
        pid_of_inserted_path(plain.string(), name.substr(0, name.size() - 5)) > 0) {
      lives.push_back(entry.path());
    }
  }
  // Processes of the run that were killed left their live file: their
  // heap line up to the last sample becomes their report.
  std::size_t running = 0;
  std::vector<std::string> converted;  // "PID (PROGRAM)"
  for (const fs::path& live : lives) {
    const fs::path report_path = live.string().substr(0, live.string().size() - 5);
    pid_t pid = 0;
    const LiveFileState state = live_file_state(live, pid);
    if (state == LiveFileState::kNotOurs || pid != pid_of_inserted_path(plain.string(), report_path.string())) continue;
    try {
      LiveFile file(live);
      if (file.region().header.start_unix_ns < since_unix_ns) continue;  // an earlier run's
      if (state == LiveFileState::kRunning) {
        ++running;
        continue;
      }
      LiveSnapshot snapshot = take_snapshot(file, false);
      write_converted_report(file, snapshot, report_path, snapshot.exited ? "exit" : "without-exit", 0);
      fs::remove(live);
      if (std::find(reports.begin(), reports.end(), report_path) == reports.end()) reports.push_back(report_path);
      converted.push_back(std::to_string(pid) + " (" + fs::path(snapshot.exe).filename().string() + ")");
    } catch (const std::exception& problem) {
      notes.push_back("cannot convert " + live.string() + ": " + problem.what());
    }
  }
  if (!converted.empty()) {
    std::string pids;
    for (std::size_t i = 0; i < converted.size() && i < 5; ++i) pids += (i > 0 ? ", " : "") + converted[i];
    if (converted.size() > 5) pids += ", ...";
    notes.push_back(std::to_string(converted.size()) + (converted.size() == 1 ? " process" : " processes") +
                    " the command started ended without exit (a signal?): " + pids +
                    "; reports converted from their live files");
  }
  if (running > 0) {
    notes.push_back(std::to_string(running) + (running == 1 ? " process" : " processes") +
                    " the command started still running: not in the summary");
  }
  std::vector<TreeReport> found;
  for (const fs::path& path : reports) {
    ReportReading reading = read_report_file(path.string());
    if (!reading) {
      notes.push_back(reading.error);
      continue;
    }
    if (reading.report->pid != pid_of_inserted_path(plain.string(), path.string())) continue;
    if (start_of(*reading.report) < since_unix_ns) continue;
    found.push_back({path.string(), std::move(*reading.report)});
  }
  std::sort(found.begin(), found.end(),
            [](const TreeReport& a, const TreeReport& b) { return start_of(a.report) < start_of(b.report); });
  return found;
}

TreeSum sum_over_time(const std::vector<TreeReport>& reports) {
  // One event per sample: at its absolute time, process i's current value
  // becomes the sample's live heap, after counting the interval's maximum.
  struct Event {
    std::uint64_t unix_ns;
    std::size_t process;
    std::int64_t live, max_live;
    bool last;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const ParsedReport& report = reports[i].report;
    const std::vector<Sample>& samples = report.samples;
    for (std::size_t s = 0; s < samples.size(); ++s) {
      events.push_back({start_of(report) + samples[s].t_ns, i, samples[s].live, samples[s].max_live,
                        s + 1 == samples.size()});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.unix_ns < b.unix_ns; });
  std::vector<std::int64_t> current(reports.size(), 0);
  std::vector<bool> alive(reports.size(), false);
  std::int64_t sum = 0;
  std::size_t alive_count = 0;
  TreeSum result;
  for (const Event& event : events) {
    if (!alive[event.process]) {
      alive[event.process] = true;
      ++alive_count;
    }
    const std::int64_t at_most = sum - current[event.process] + std::max(event.live, event.max_live);
    if (at_most > result.peak_bytes) {
      result.peak_bytes = at_most;
      result.peak_unix_ns = event.unix_ns;
    }
    result.overlapping = std::max(result.overlapping, alive_count);
    sum += event.live - current[event.process];
    current[event.process] = event.live;
    if (event.last) {  // the process has ended: it holds nothing any more
      sum -= current[event.process];
      current[event.process] = 0;
      alive[event.process] = false;
      --alive_count;
    }
  }
  return result;
}

std::string summarize_tree(const std::vector<TreeReport>& reports, std::size_t max_rows) {
  if (reports.size() < 2) return "";
  // The first process to start (the command's report may be of an image it
  // exec'd later, after processes of the run had started and ended).
  std::uint64_t origin = start_of(reports.front().report);
  for (const TreeReport& entry : reports) origin = std::min(origin, start_of(entry.report));
  const auto since_origin = [origin](std::uint64_t unix_ns) {
    return static_cast<std::int64_t>(unix_ns > origin ? unix_ns - origin : 0);
  };
  std::vector<const TreeReport*> order;
  for (const TreeReport& entry : reports) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const TreeReport* a, const TreeReport* b) {
    return a->report.peak_bytes > b->report.peak_bytes;
  });
  std::string text = "heapline: " + std::to_string(reports.size()) +
                     " processes (peak, when, pid, parent, program; times from the first one's start):\n";
  char line[512];
  std::size_t shown = 0;
  std::int64_t rest_largest = -1;
  for (const TreeReport* entry : order) {
    const ParsedReport& report = entry->report;
    const std::int64_t peak = report.peak_bytes;
    if (shown == max_rows) {
      rest_largest = std::max(rest_largest, peak);
      continue;
    }
    ++shown;
    const std::int64_t at = since_origin(start_of(report) + report.peak_time_ns);
    std::string program = program_of(report);
    if (entry == &reports.front()) program += " (the command)";
    if (!report.ended_by_exit()) program += " (ended without exit)";
    std::snprintf(line, sizeof line, "heapline:   %10s at %9s  pid %-7d parent %-7d %s\n", human_bytes(peak).c_str(),
                  human_seconds(at).c_str(), report.pid, report.ppid, program.c_str());
    text += line;
  }
  if (rest_largest >= 0) {
    text += "heapline:   ... and " + std::to_string(reports.size() - shown) + " more, each at most " +
            human_bytes(rest_largest) + "\n";
  }
  const TreeSum sum = sum_over_time(reports);
  if (sum.overlapping > 1) {
    text += "heapline: together at most " + human_bytes(sum.peak_bytes) + " at " +
            human_seconds(since_origin(sum.peak_unix_ns)) + " (up to " + std::to_string(sum.overlapping) +
            " processes at once; the sum of their sampled heaps)\n";
  }
  return text;
}

}  // namespace heapline::launcher
