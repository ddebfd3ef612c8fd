#include "process_tree.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <unistd.h>
#include <system_error>

#include <heapline/figures.h>
#include <heapline/file_kind.h>

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
  return name.empty() ? "?" : terminal_text(name, 64);
}

}  // namespace

ReportWatch::ReportWatch() : fd_(inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) {}

void ReportWatch::start(const std::string& plain_path) {
  plain_ = fs::absolute(plain_path).string();
  if (fd_ >= 0) inotify_add_watch(fd_, fs::path(plain_).parent_path().c_str(), IN_MOVED_TO | IN_CLOSE_WRITE);
}

ReportWatch::~ReportWatch() {
  if (fd_ >= 0) ::close(fd_);
}

void ReportWatch::read_events() {
  if (fd_ < 0 || plain_.empty()) return;
  alignas(inotify_event) char buffer[16384];
  for (;;) {
    const ssize_t got = ::read(fd_, buffer, sizeof buffer);
    if (got <= 0) return;
    for (ssize_t at = 0; at < got;) {
      const auto* event = reinterpret_cast<const inotify_event*>(buffer + at);
      at += static_cast<ssize_t>(sizeof(inotify_event) + event->len);
      if (event->len == 0) continue;
      const std::string path = (fs::path(plain_).parent_path() / event->name).string();
      const pid_t pid = pid_of_inserted_path(plain_, path);
      if (pid <= 0 || !not_regular_at(path).empty()) continue;  // a link is never followed
      ReportReading reading = read_report_file(path);
      if (reading && reading.report->pid == pid) seen_.push_back({path, std::move(*reading.report)});
    }
  }
}

std::string not_regular_at(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || S_ISREG(info.st_mode)) return "";
  return heapline::file_kind_name(info.st_mode);
}

// The kernel stamps files with its coarse clock, which may lag the precise
// one by a tick: that much is allowed.
bool written_before_run(const std::string& path, std::uint64_t since_unix_ns) {
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) return false;
  timespec tick{};
  if (::clock_getres(CLOCK_REALTIME_COARSE, &tick) != 0) tick = {0, 10'000'000};
  const auto ns = [](const timespec& t) {
    return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
  };
  return ns(info.st_mtim) + ns(tick) < since_unix_ns;
}

namespace {

bool same_process(const ParsedReport& a, const ParsedReport& b) {
  return a.pid == b.pid && a.start_unix_ns == b.start_unix_ns;
}

// One process found beside the run's report: its identity, whether it is
// the run's decided by of_this_run().
struct Candidate {
  pid_t pid, ppid;
  std::string run_id;
  std::uint64_t start_unix_ns;
};

// Which candidates are the run's: by run id where both sides know it, else
// by ancestry from the command and the launcher.
std::vector<bool> of_this_run(const std::vector<Candidate>& candidates, const RunIdentity& run) {
  std::vector<bool> ours(candidates.size(), false);
  std::multimap<pid_t, std::size_t> by_parent;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    const Candidate& c = candidates[i];
    if (c.start_unix_ns < run.since_unix_ns) continue;  // an earlier run's
    if (!run.run_id.empty() && !c.run_id.empty()) {
      ours[i] = c.run_id == run.run_id;
    } else {
      by_parent.emplace(c.ppid, i);
    }
  }
  std::vector<pid_t> parents = {run.command_pid, run.launcher_pid, run.keeper_pid};
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    if (ours[i]) parents.push_back(candidates[i].pid);
  }
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    const auto [first, last] = by_parent.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      if (ours[it->second]) continue;
      ours[it->second] = true;
      parents.push_back(candidates[it->second].pid);
    }
  }
  return ours;
}

}  // namespace

std::vector<TreeReport> find_child_reports(const std::string& plain_path, const RunIdentity& run,
                                           const std::vector<TreeReport>& seen, std::vector<std::string>& notes) {
  const fs::path plain = fs::absolute(plain_path);
  std::error_code error;
  fs::directory_iterator entries(plain.parent_path(), error);
  if (error) return {};
  // Every report and live file of a process beside the run's report, then
  // those of the run.
  std::vector<TreeReport> reports = seen;
  struct Live {
    fs::path path;
    LiveFileState state;
    Candidate identity;
  };
  std::vector<Live> lives;
  for (const fs::directory_entry& entry : entries) {
    const std::string name = entry.path().string();
    if (const pid_t pid = pid_of_inserted_path(plain.string(), name); pid > 0) {
      // Only a file this run may have written is read: a regular file (a
      // link is never followed, whatever it points to) written since the
      // run began. What an earlier run or another program left at a name
      // of the pattern is none of this run's, readable or not.
      if (!not_regular_at(name).empty() || written_before_run(name, run.since_unix_ns)) continue;
      ReportReading reading = read_report_file(name);
      if (!reading) {
        if (reading.problem != ReportProblem::kUnreadable) notes.push_back(reading.error);
        continue;
      }
      if (reading.report->pid != pid) continue;
      const bool known = std::any_of(reports.begin(), reports.end(),
                                     [&](const TreeReport& r) { return same_process(r.report, *reading.report); });
      if (!known) reports.push_back({name, std::move(*reading.report)});
    }
    if (name.size() > 5 && name.compare(name.size() - 5, 5, ".live") == 0 &&
        pid_of_inserted_path(plain.string(), name.substr(0, name.size() - 5)) > 0) {
      pid_t pid = 0;
      const LiveFileState state = live_file_state(entry.path(), pid);
      if (state == LiveFileState::kNotOurs || pid != pid_of_inserted_path(plain.string(), name.substr(0, name.size() - 5))) {
        continue;
      }
      try {
        const LiveFile file(entry.path());
        const LiveHeader& h = file.region().header;
        lives.push_back({entry.path(), state, {h.pid, h.ppid, "", h.start_unix_ns}});
      } catch (const std::exception&) {
      }
    }
  }
  std::vector<Candidate> candidates;
  for (const TreeReport& r : reports) {
    candidates.push_back({r.report.pid, r.report.ppid, r.report.run_id, r.report.start_unix_ns});
  }
  for (const Live& live : lives) candidates.push_back(live.identity);
  const std::vector<bool> ours = of_this_run(candidates, run);
  const std::size_t scanned = reports.size();  // the reports among the candidates

  // Processes of the run that were killed left their live file: their
  // heap line up to the last sample becomes their report. Those still
  // running are counted once, whether known by a live file or by the
  // launcher as a process it adopted.
  std::set<pid_t> running(run.left_running.begin(), run.left_running.end());
  std::vector<std::string> converted;  // "PID (PROGRAM)"
  for (std::size_t i = 0; i < lives.size(); ++i) {
    if (!ours[scanned + i]) continue;
    const Live& live = lives[i];
    if (live.state == LiveFileState::kRunning) {
      running.insert(live.identity.pid);
      continue;
    }
    const fs::path report_path = live.path.string().substr(0, live.path.string().size() - 5);
    try {
      const LiveFile file(live.path);
      LiveSnapshot snapshot = take_snapshot(file, false);
      write_converted_report(file, snapshot, report_path, snapshot.exited ? "exit" : "without-exit", 0);
      fs::remove(live.path);
      converted.push_back(std::to_string(live.identity.pid) + " (" +
                          terminal_text(fs::path(snapshot.exe).filename().string(), 64) + ")");
      ReportReading reading = read_report_file(report_path.string());
      if (reading) reports.push_back({report_path.string(), std::move(*reading.report)});
    } catch (const std::exception& problem) {
      notes.push_back("cannot convert " + live.path.string() + ": " + problem.what());
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
  if (!running.empty()) {
    notes.push_back(std::to_string(running.size()) + (running.size() == 1 ? " process" : " processes") +
                    " the command started still running: not in the summary");
  }
  std::vector<TreeReport> found;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    // Those after the scanned ones were converted from the run's live files.
    if ((i < scanned && !ours[i]) || reports[i].report.pid == run.command_pid) continue;
    found.push_back(std::move(reports[i]));
  }
  std::sort(found.begin(), found.end(),
            [](const TreeReport& a, const TreeReport& b) { return start_of(a.report) < start_of(b.report); });
  return found;
}

std::string summarize_each(const std::vector<TreeReport>& reports) {
  std::string text;
  for (const TreeReport& entry : reports) {
    const ParsedReport& r = entry.report;
    text += "heapline: pid " + std::to_string(r.pid) + " (" + program_of(r) + "): peak " + human_bytes(r.peak_bytes) +
            " at " + human_seconds(static_cast<std::int64_t>(r.peak_time_ns)) + ", final " + human_bytes(r.final_bytes);
    if (r.mapped_on()) {
      text += "; heap + mapped peak " + human_bytes(r.total.peak_bytes) + " at " +
              human_seconds(static_cast<std::int64_t>(r.total.peak_time_ns)) + ", final " +
              human_bytes(r.total.final_bytes);
    }
    if (peak_resident_bytes(r)) text += "; peak resident set " + human_resident(r);
    text += "; " + std::to_string(r.samples.size()) + " samples, report " + terminal_text(entry.path) + "\n";
  }
  return text;
}

PeakAt whole_peak(const ParsedReport& report) {
  return whole_peak_of({report.peak_bytes, report.peak_time_ns}, {report.total.peak_bytes, report.total.peak_time_ns});
}

namespace {

// One series (heap or mapped) as a step function of its samples: each
// sample's value holds from its time until the next one's; its max_live
// bounds the interval that ends at it.
class Steps {
 public:
  explicit Steps(const std::vector<Sample>& samples) : samples_(samples) {}

  // Moves to time t (never back): the value held at t, 0 before the first.
  std::int64_t value_at(std::uint64_t t_ns) {
    passed_from_ = next_;
    while (next_ < samples_.size() && samples_[next_].t_ns <= t_ns) ++next_;
    return next_ == 0 ? 0 : samples_[next_ - 1].live;
  }

  // The most the series can have held in (from, to], `to` the time last
  // passed to value_at and `from` the one before. The samples passed on
  // the way close intervals inside (from, to]: their maxima (and the value
  // held before them) bound it, every one of them, as several samples may
  // share one time (the exit's sample at the coarse clock's time of the
  // one before). Otherwise (from, to] lies inside the interval the next
  // sample closes, bounded by that one's maximum; after the last sample
  // the value holds.
  std::int64_t most_since(std::int64_t value_before) const {
    std::int64_t most = value_before;
    for (std::size_t i = passed_from_; i < next_; ++i) most = std::max({most, samples_[i].live, samples_[i].max_live});
    if (at_to_) return most;
    if (next_ < samples_.size()) most = std::max({most, samples_[next_].live, samples_[next_].max_live});
    return most;
  }

  void mark(std::uint64_t t_ns) { at_to_ = next_ > 0 && samples_[next_ - 1].t_ns == t_ns; }

 private:
  const std::vector<Sample>& samples_;
  std::size_t next_ = 0;
  std::size_t passed_from_ = 0;  // the first sample the last value_at passed
  bool at_to_ = false;
};

}  // namespace

bool has_mapped_series(const ParsedReport& report) { return report.mapped_on() && !report.mapped_samples.empty(); }

std::vector<MemoryPoint> memory_over_time(const ParsedReport& report) {
  static const std::vector<Sample> kNone;
  const std::vector<Sample>& heap = report.samples;
  const std::vector<Sample>& mapped = has_mapped_series(report) ? report.mapped_samples : kNone;
  // Each series at its own times: a mapping made between two heap samples
  // shows at its own time, not at the heap sample's. The points are the
  // union of both series' times.
  std::vector<std::uint64_t> times;
  times.reserve(heap.size() + mapped.size());
  for (const Sample& s : heap) times.push_back(s.t_ns);
  for (const Sample& s : mapped) times.push_back(s.t_ns);
  std::sort(times.begin(), times.end());
  times.erase(std::unique(times.begin(), times.end()), times.end());

  const PeakAt own = has_mapped_series(report) ? whole_peak(report) : PeakAt{report.peak_bytes, report.peak_time_ns};
  Steps heap_steps(heap), mapped_steps(mapped);
  std::vector<MemoryPoint> points;
  points.reserve(times.size());
  std::int64_t heap_before = 0, mapped_before = 0;
  bool peak_reached = false;
  for (const std::uint64_t t : times) {
    MemoryPoint point{t, heap_steps.value_at(t), mapped_steps.value_at(t), 0, 0};
    heap_steps.mark(t);
    mapped_steps.mark(t);
    point.heap_most = heap_steps.most_since(heap_before);
    // Both maxima may not have been held at once: never above the
    // process's own peak of heap + mapped.
    point.mapped_most = mapped_steps.most_since(mapped_before);
    point.most = bounded_sum(point.heap_most, point.mapped_most);
    if (own.bytes > 0) point.most = std::min(point.most, own.bytes);
    point.most = std::max(point.most, bounded_sum(point.heap, point.mapped));
    // The interval that holds the process's own peak reaches it.
    if (!peak_reached && t >= own.t_ns) {
      point.most = std::max(point.most, own.bytes);
      peak_reached = true;
    }
    heap_before = point.heap;
    mapped_before = point.mapped;
    points.push_back(point);
  }
  return points;
}

std::vector<Sample> whole_memory(const ParsedReport& report) {
  std::vector<Sample> points;
  for (const MemoryPoint& point : memory_over_time(report)) {
    points.push_back({report.start_unix_ns + point.t_ns, bounded_sum(point.heap, point.mapped), point.most});
  }
  return points;
}

TreeSum sum_over_time(const std::vector<std::vector<Sample>>& series) {
  // One event per point: at its time, process i's current value becomes
  // the point's, after counting the interval's bound.
  struct Event {
    std::uint64_t unix_ns;
    std::size_t process;
    std::int64_t now, at_most;
    bool last;
  };
  std::vector<Event> events;
  for (std::size_t i = 0; i < series.size(); ++i) {
    for (std::size_t s = 0; s < series[i].size(); ++s) {
      const Sample& point = series[i][s];
      events.push_back({point.t_ns, i, point.live, point.max_live, s + 1 == series[i].size()});
    }
  }
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) { return a.unix_ns < b.unix_ns; });
  std::vector<std::int64_t> current(series.size(), 0);
  std::vector<bool> alive(series.size(), false);
  BytesSum sum;  // exact, whatever the number of processes
  std::size_t alive_count = 0;
  TreeSum result;
  result.line.reserve(events.size());
  for (const Event& event : events) {
    if (!alive[event.process]) {
      alive[event.process] = true;
      ++alive_count;
    }
    const std::int64_t at_most = ((BytesSum(sum) -= current[event.process]) += std::max(event.now, event.at_most)).bytes();
    if (at_most > result.peak_bytes) {
      result.peak_bytes = at_most;
      result.peak_unix_ns = event.unix_ns;
    }
    result.overlapping = std::max(result.overlapping, alive_count);
    (sum += event.now) -= current[event.process];
    current[event.process] = event.now;
    if (event.last) {  // the process has ended: it holds nothing any more
      sum -= current[event.process];
      current[event.process] = 0;
      alive[event.process] = false;
      --alive_count;
    }
    result.line.push_back({event.unix_ns, sum.bytes(), at_most});
  }
  return result;
}

TreeSum sum_over_time(const std::vector<TreeReport>& reports) {
  std::vector<std::vector<Sample>> series;
  series.reserve(reports.size());
  for (const TreeReport& entry : reports) series.push_back(whole_memory(entry.report));
  return sum_over_time(series);
}

std::uint64_t tree_origin_unix_ns(const std::vector<TreeReport>& reports) {
  // The first process to start (the command's report may be of an image it
  // exec'd later, after processes of the run had started and ended).
  std::uint64_t origin = reports.empty() ? 0 : start_of(reports.front().report);
  for (const TreeReport& entry : reports) origin = std::min(origin, start_of(entry.report));
  return origin;
}

std::vector<const TreeReport*> largest_first(const std::vector<TreeReport>& reports) {
  std::vector<const TreeReport*> order;
  for (const TreeReport& entry : reports) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const TreeReport* a, const TreeReport* b) {
    return whole_peak(a->report).bytes > whole_peak(b->report).bytes;
  });
  return order;
}

namespace {

// A process's mapped peak for its row: "-" where the report has no figure.
std::string mapped_column(const ParsedReport& report) {
  switch (report.mapped.mode) {
    case ParsedReport::MappedMode::kOn:
      return human_bytes(report.mapped.peak_bytes);
    case ParsedReport::MappedMode::kOff:
      return "off";
    default:
      return "-";
  }
}

}  // namespace

bool is_trivial_helper(const TreeReport& entry, const std::vector<TreeReport>& reports) {
  if (&entry == &reports.front()) return false;  // the command is never folded
  const ParsedReport& report = entry.report;
  std::int64_t largest = 0;
  for (const TreeReport& other : reports) largest = std::max(largest, whole_peak(other.report).bytes);
  const std::int64_t peak = whole_peak(report).bytes;
  return report.ended_by_exit() && report.duration_ns < kHelperMostNs && peak < kHelperMostBytes &&
         peak <= largest / 8;
}

std::string summarize_tree(const std::vector<TreeReport>& reports, std::size_t max_rows) {
  if (reports.size() < 2) return "";
  const std::uint64_t origin = tree_origin_unix_ns(reports);
  const auto since_origin = [origin](std::uint64_t unix_ns) {
    return static_cast<std::int64_t>(unix_ns > origin ? unix_ns - origin : 0);
  };
  std::string text = "heapline: " + std::to_string(reports.size()) +
                     " processes (peak of heap + mapped and when, times from the first one's start; each one's own "
                     "heap and mapped peaks, and peak resident set; pid, parent, program):\n";
  char line[512];
  std::size_t shown = 0, rest = 0;
  std::int64_t rest_largest = -1;
  // The trivial helpers (a shim's shells), by program, in one line.
  std::size_t helpers = 0;
  std::int64_t helpers_largest = 0;
  std::map<std::string, std::size_t> helper_programs;
  for (const TreeReport* entry : largest_first(reports)) {
    const ParsedReport& report = entry->report;
    const PeakAt peak = whole_peak(report);
    if (is_trivial_helper(*entry, reports)) {
      ++helpers;
      helpers_largest = std::max(helpers_largest, peak.bytes);
      ++helper_programs[program_of(report)];
      continue;
    }
    if (shown == max_rows) {
      ++rest;
      rest_largest = std::max(rest_largest, peak.bytes);
      continue;
    }
    ++shown;
    const std::int64_t at = since_origin(start_of(report) + peak.t_ns);
    std::string program = program_of(report);
    if (entry == &reports.front()) program += " (the command)";
    if (!report.ended_by_exit()) program += " (ended without exit)";
    std::snprintf(line, sizeof line,
                  "heapline:   %10s at %9s   heap %10s  mapped %10s  resident %10s   pid %-7d parent %-7d %s\n",
                  human_bytes(peak.bytes).c_str(), human_seconds(at).c_str(), human_bytes(report.peak_bytes).c_str(),
                  mapped_column(report).c_str(), human_resident(report).c_str(), report.pid, report.ppid,
                  program.c_str());
    text += line;
  }
  if (rest > 0) {
    text += "heapline:   ... and " + std::to_string(rest) + " more, each at most " + human_bytes(rest_largest) + "\n";
  }
  if (helpers > 0) {
    // The most frequent programs first.
    std::vector<std::pair<std::size_t, std::string>> programs;
    for (const auto& [program, count] : helper_programs) programs.emplace_back(count, program);
    std::stable_sort(programs.begin(), programs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string names;
    for (std::size_t i = 0; i < programs.size(); ++i) {
      if (i == 4) {
        names += ", ...";
        break;
      }
      names += (i == 0 ? "" : ", ") + std::to_string(programs[i].first) + " " + programs[i].second;
    }
    text += "heapline:   " + std::to_string(helpers) + (helpers == 1 ? " short-lived helper" : " short-lived helpers") +
            " (" + names + "), each under " + human_seconds(static_cast<std::int64_t>(kHelperMostNs)) +
            " and at most " + human_bytes(helpers_largest) + "; --verbose lists each\n";
  }
  const TreeSum sum = sum_over_time(reports);
  if (sum.overlapping > 1) {
    text += "heapline: together at most " + human_bytes(sum.peak_bytes) + " of heap + mapped at " +
            human_seconds(since_origin(sum.peak_unix_ns)) + " (up to " + std::to_string(sum.overlapping) +
            " processes at once; the sum of their samples)\n";
  }
  return text;
}

}  // namespace heapline::launcher
