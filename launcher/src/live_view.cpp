#include "live_view.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <sstream>
#include <memory>
#include <stdexcept>

#include <heapline/figures.h>
#include <heapline/precision_budget_rule.h>
#include <heapline/regular_file.h>
#include <heapline/report_format.h>
#include <heapline/report_reader.h>
#include <heapline/seqlock.h>

#include "report_summary.h"

namespace heapline::launcher {

namespace fs = std::filesystem;

namespace {

// The file into `into`, from its start: bytes past its end read as zeros.
// Returns how many the file held (at most the region's size).
std::size_t copy_live_file(int fd, LiveRegion& into) {
  char* out = reinterpret_cast<char*>(static_cast<void*>(&into));
  std::size_t copied = 0;
  while (copied < sizeof(LiveRegion)) {
    const ssize_t got = ::pread(fd, out + copied, sizeof(LiveRegion) - copied, static_cast<off_t>(copied));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    copied += static_cast<std::size_t>(got);
  }
  std::memset(out + copied, 0, sizeof(LiveRegion) - copied);
  return copied;
}

// Whether a copy of a file that its process may be writing is consistent:
// every seqlock and merge bracket in it even, and the same in the file now
// (none began or ended while the copy was made).
bool copy_is_consistent(int fd, const LiveRegion& copy, std::size_t copied) {
  const std::atomic<std::uint64_t>* words[] = {&copy.header.seq, &copy.timeline.merge_seq,
                                               &copy.mapped_timeline.merge_seq, &copy.peak_profile.seq,
                                               &copy.resident_timeline.merge_seq};
  for (const std::atomic<std::uint64_t>* word : words) {
    const auto at = static_cast<std::size_t>(reinterpret_cast<const char*>(word) - reinterpret_cast<const char*>(&copy));
    if (at + sizeof(std::uint64_t) > copied) continue;
    const std::uint64_t in_copy = word->load(std::memory_order_relaxed);
    std::uint64_t now = 0;
    if (::pread(fd, &now, sizeof now, static_cast<off_t>(at)) != static_cast<ssize_t>(sizeof now)) return true;  // cut meanwhile: the next check says so
    if (in_copy % 2 != 0 || now != in_copy) return false;
  }
  return true;
}

}  // namespace

LiveFile::LiveFile(const fs::path& path, CutFile cut)
    : path_(path), file_(RegularFile::open(path.string())), region_(std::make_unique<LiveRegion>()), cut_(cut) {
  // Never a FIFO or a device: opened without blocking, its type checked.
  if (!file_.ok()) throw std::runtime_error(file_.error());
  copied_bytes_ = copy_live_file(file_.fd(), *region_);
  check(false);
}

void LiveFile::refresh(bool still_writing) {
  // A writer killed in the middle of an update leaves a bracket odd for
  // good: after these attempts the copy is taken as it is (the readers
  // below know what a killed writer leaves).
  constexpr int kAttempts = 200;
  for (int attempt = 0;; ++attempt) {
    copied_bytes_ = copy_live_file(file_.fd(), *region_);
    if (!still_writing || attempt == kAttempts || copy_is_consistent(file_.fd(), *region_, copied_bytes_)) break;
    sched_yield();
  }
  check(true);
}

void LiveFile::check(bool again) const {
  const std::size_t size = copied_bytes_;
  if (again && size < kLiveRegionV1Bytes) {
    throw std::runtime_error(path_.string() + " was cut to " + std::to_string(size) +
                             " bytes by another process while it was read (truncated): its heap line is no longer "
                             "there");
  }
  if (size < sizeof(LiveHeader)) {
    // Its first word tells a live file cut inside its header from another
    // program's short file.
    const bool magic = size >= sizeof(std::uint64_t) && region_->header.magic.load(std::memory_order_relaxed) == kLiveMagic;
    throw std::runtime_error(path_.string() + (magic ? " is cut inside its header: " : " is not a heapline live file (too short: ") +
                             std::to_string(size) + (magic ? " of its " + std::to_string(sizeof(LiveHeader)) + " bytes" : " bytes)"));
  }
  const LiveHeader& h = region_->header;
  if (h.magic.load(std::memory_order_acquire) != kLiveMagic) {
    throw std::runtime_error(path_.string() + " is not a heapline live file (no magic: its header was never written)");
  }
  if (h.version != kLiveVersion && h.version != kLiveVersionWithoutProfile) {
    throw std::runtime_error(path_.string() + ": live file version " + std::to_string(h.version) +
                             " is not supported (this heapline reads version " + std::to_string(kLiveVersion) + ")");
  }
  if (h.header_bytes != sizeof(LiveHeader) || h.marker_capacity != kLiveMarkerCapacity ||
      h.sample_capacity != kTimelineCapacity) {
    throw std::runtime_error(
        path_.string() + " is corrupt: its layout is not version " + std::to_string(kLiveVersion) + "'s (header " +
        std::to_string(h.header_bytes) + " bytes, " + std::to_string(h.marker_capacity) + " markers, " +
        std::to_string(h.sample_capacity) + " samples; version " + std::to_string(kLiveVersion) + " has " +
        std::to_string(sizeof(LiveHeader)) + ", " + std::to_string(kLiveMarkerCapacity) + ", " +
        std::to_string(kTimelineCapacity) + ")");
  }
  // The bytes its header says it holds: a file shorter than that is cut (a
  // copy cut short), never read as an older, shorter layout, which would
  // drop its mapped and resident series without a word. The parts the
  // header promises (live_format.h): the mapped series when mapped_mode is
  // set, the profile with version 2 beside it. (The resident series is read
  // when flagged and the file is that long.)
  std::size_t said = kLiveRegionV1Bytes;
  if (h.mapped_mode != kMappedUnknown) {
    said = h.version >= kLiveVersion ? kLiveRegionWithoutResidentBytes : kLiveRegionWithoutProfileBytes;
  }
  if (size < said && cut_ == CutFile::kRefused) {
    throw std::runtime_error(path_.string() + " is cut: " + std::to_string(size) + " of the " + std::to_string(said) +
                             " bytes its header says it holds");
  }
}

namespace {

std::string bounded(const char* text, std::size_t capacity) { return std::string(text, strnlen(text, capacity)); }

// What no writer ever leaves, however it died: such a file was corrupted or
// crafted, and a report made from it would be a lie. Empty when plausible.
std::string timeline_problem(const TimelineStorage& t) {
  const std::uint64_t count = t.count.load(std::memory_order_acquire);
  if (count > kTimelineCapacity) return "sample count " + std::to_string(count) + " beyond the capacity";
  if (t.merge_seq.load(std::memory_order_acquire) % 2 != 0) {
    const std::uint64_t from = t.merge_from.load(std::memory_order_relaxed);
    const std::uint64_t done = t.merge_done.load(std::memory_order_relaxed);
    if (from > kTimelineCapacity || done > (from + 1) / 2) {
      return "impossible merge in progress (" + std::to_string(done) + " of " + std::to_string(from) + ")";
    }
  }
  return "";
}

std::string structural_problem(const LiveFile& file) {
  const LiveHeader& h = file.region().header;
  const std::uint32_t state = h.state.load(std::memory_order_acquire);
  if (state != kLiveRunning && state != kLiveExited) return "unknown state " + std::to_string(state);
  if (h.mapped_mode > kMappedOff) return "unknown mapped mode " + std::to_string(h.mapped_mode);
  if (h.pid <= 0 || h.ppid < 0) return "impossible pid " + std::to_string(h.pid) + " (parent " + std::to_string(h.ppid) + ")";
  if (std::string problem = timeline_problem(file.region().timeline); !problem.empty()) return problem;
  if (file.has_mapped_series()) {
    if (std::string problem = timeline_problem(file.region().mapped_timeline); !problem.empty()) {
      return "mapped series: " + problem;
    }
  }
  if (file.has_resident_series()) {
    if (std::string problem = timeline_problem(file.region().resident_timeline); !problem.empty()) {
      return "resident series: " + problem;
    }
  }
  return "";
}

// Samples that go back in time (a marker placed by another thread or a
// signal handler while a sample was taken appends one out of order) are
// dropped, their maximum kept in the sample before, so that the line stays
// in time order and its peak is not lost. Returns how many were dropped.
std::size_t drop_samples_back_in_time(std::vector<Sample>& samples) {
  std::size_t kept = 0;
  for (std::size_t i = 0; i < samples.size(); ++i) {
    if (kept > 0 && samples[i].t_ns < samples[kept - 1].t_ns) {
      samples[kept - 1].max_live = std::max(samples[kept - 1].max_live, samples[i].max_live);
      continue;
    }
    samples[kept++] = samples[i];
  }
  const std::size_t dropped = samples.size() - kept;
  samples.resize(kept);
  return dropped;
}

// The resident series and figures of a file that has them (none otherwise:
// resident_live -1). The writer appends a reading to the series before it
// writes the figures: the series, which a reader may see one reading
// ahead, has the latest reading, and raises the peak.
void read_resident(const LiveFile& file, bool still_writing, LiveSnapshot& s) {
  LiveFigures& f = s.figures;
  if (!file.has_resident_series() || f.resident_live < 0) f.resident_live = -1;
  if (!file.has_resident_series() || f.resident_peak < 0) f.resident_peak = 0, f.resident_peak_time_ns = 0;
  if (!file.has_resident_series()) return;
  s.resident_samples.resize(kTimelineCapacity);
  s.resident_samples.resize(read_timeline(file.region().resident_timeline, s.resident_samples.data(), still_writing));
  s.dropped_samples += drop_samples_back_in_time(s.resident_samples);
  for (const Sample& sample : s.resident_samples) {
    if (sample.live < 0) throw std::runtime_error(file.path().string() + " is corrupt: resident series: a negative reading");
    if (sample.max_live > f.resident_peak) f.resident_peak = sample.max_live, f.resident_peak_time_ns = sample.t_ns;
  }
  // No reading in the series, none at all (only a damaged file says otherwise).
  f.resident_live = s.resident_samples.empty() ? -1 : s.resident_samples.back().live;
}

}  // namespace

LiveSnapshot take_snapshot(const LiveFile& file, bool still_writing) {
  const LiveRegion& region = file.region();
  const LiveHeader& h = region.header;
  if (std::string problem = structural_problem(file); !problem.empty()) {
    throw std::runtime_error(file.path().string() + " is corrupt: " + problem);
  }
  LiveSnapshot s;
  s.pid = h.pid;
  s.ppid = h.ppid;
  s.exe = bounded(h.exe, sizeof h.exe);
  s.exec_note = bounded(h.exec_note, sizeof h.exec_note);
  s.allocator = bounded(h.allocator, sizeof h.allocator);
  s.size_basis = bounded(h.size_basis, sizeof h.size_basis);
  s.start_unix_ns = bounded_ns(h.start_unix_ns);
  s.exact = h.exact != 0;
  const bool budget = h.precision_rule == kPrecisionBudget;
  s.budget_floor_bytes = budget ? h.precision_bytes : 0;
  s.budget_divisor = budget ? h.precision_divisor : 0;
  s.exited = h.state.load(std::memory_order_acquire) == kLiveExited;
  s.figures = read_figures(h, still_writing ? 100000 : 0);
  s.bound_bytes = stated_bound(h, s.figures);
  std::uint32_t claimed = h.markers_claimed.load(std::memory_order_acquire);
  for (std::uint32_t i = 0; i < claimed && i < kLiveMarkerCapacity; ++i) {
    const LiveMarker& marker = region.markers[i];
    if (marker.ready.load(std::memory_order_acquire) == 0) continue;
    s.markers.emplace_back(bounded_ns(marker.t_ns.load(std::memory_order_relaxed)), bounded(marker.name, sizeof marker.name));
  }
  // Up to the latest publish: a kill between two samples loses nothing published.
  s.samples.resize(kHeapLineCapacity);
  s.samples.resize(read_heap_line(region, s.samples.data(), still_writing));
  // The writer takes its first sample while it creates the file.
  if (s.samples.empty() && !still_writing) throw std::runtime_error(file.path().string() + " is corrupt: no samples");
  s.dropped_samples = drop_samples_back_in_time(s.samples);
  s.interval_ns = bounded_ns(region.timeline.interval_ns.load(std::memory_order_relaxed));
  if (file.has_mapped_series()) {
    s.mapped_mode = static_cast<LiveMappedMode>(h.mapped_mode);
    // Up to the latest mapping change, like the heap line.
    s.mapped_samples.resize(kHeapLineCapacity);
    s.mapped_samples.resize(read_mapped_line(region, s.mapped_samples.data(), still_writing));
    // The writer appends the mapped sample just after the heap's: a reader
    // may see one more heap sample (or, mid-merge, a different count); the
    // series are read as of the shorter, time by time.
    s.dropped_samples += drop_samples_back_in_time(s.mapped_samples);
    // One series may end with an open point (its latest publish or
    // mapping change after its latest sample) that the other lacks: the
    // other, unchanged since, gets one at the same time, so that the two
    // still end the same intervals.
    if (s.samples.size() == s.mapped_samples.size() + 1 && !s.mapped_samples.empty() &&
        s.samples.back().t_ns > s.mapped_samples.back().t_ns) {
      const std::int64_t mapped = s.mapped_samples.back().live;
      s.mapped_samples.push_back(Sample{s.samples.back().t_ns, mapped, mapped});
    } else if (s.mapped_samples.size() == s.samples.size() + 1 && !s.samples.empty() &&
               s.mapped_samples.back().t_ns > s.samples.back().t_ns) {
      const std::int64_t heap = s.samples.back().live;
      s.samples.push_back(Sample{s.mapped_samples.back().t_ns, heap, heap});
    }
  } else {
    s.figures.mapped_live = s.figures.mapped_peak = s.figures.total_peak = 0;
    s.figures.mapped_peak_time_ns = s.figures.total_peak_time_ns = 0;
  }
  read_resident(file, still_writing, s);
  // Heap + mapped is never below the heap alone, nor below what is held now
  // (the figures of the latest sample may lag the latest publish).
  LiveFigures& f = s.figures;
  if (s.mapped_mode == kMappedOn) {
    if (f.peak > f.total_peak) f.total_peak = f.peak, f.total_peak_time_ns = f.peak_time_ns;
    if (bounded_sum(f.live, f.mapped_live) > f.total_peak) {
      f.total_peak = bounded_sum(f.live, f.mapped_live);
      f.total_peak_time_ns = std::max(f.last_sample_ns, latest_publish_ns(h));
    }
  }
  return s;
}

std::string dropped_samples_note(const LiveSnapshot& snapshot) {
  return "dropped " + std::to_string(snapshot.dropped_samples) + " sample" +
         (snapshot.dropped_samples == 1 ? "" : "s") + " of pid " + std::to_string(snapshot.pid) +
         " that went back in time (markers placed concurrently); their maxima are kept in the samples before";
}

bool process_alive(pid_t pid) {
  if (pid <= 0 || (::kill(pid, 0) != 0 && errno != EPERM)) return false;
  // A zombie (exited, not yet reaped by its parent) is still found by kill:
  // its state, after the last ')' of /proc/PID/stat, says it has ended.
  std::string error;
  const std::string stat = RegularFile::open("/proc/" + std::to_string(pid) + "/stat").read_all(4096, error);
  const std::size_t after_name = stat.rfind(") ");
  if (!error.empty() || after_name == std::string::npos || after_name + 2 >= stat.size()) return true;
  const char state = stat[after_name + 2];
  return state != 'Z' && state != 'X';
}

std::optional<fs::path> find_live_file(pid_t pid, std::string& why) {
  const std::string maps_path = "/proc/" + std::to_string(pid) + "/maps";
  std::string error;
  std::istringstream maps(RegularFile::open(maps_path).read_all(256u << 20, error));
  if (!error.empty()) {
    why = process_alive(pid) ? "cannot read " + maps_path + " (another user's process?)"
                             : "no process " + std::to_string(pid);
    return std::nullopt;
  }
  std::string line;
  std::string removed;  // a live file of the process's whose name was removed
  bool finished = false;  // ... after its report was written
  std::string cut;  // a live file of the process's that is too short now
  while (std::getline(maps, line)) {
    // address perms offset dev inode pathname: the path starts at the first '/'.
    auto slash = line.find('/');
    if (slash == std::string::npos) continue;
    std::string path = line.substr(slash);
    if (path.size() > 10 && path.compare(path.size() - 10, 10, " (deleted)") == 0) {
      if (path.find(".live") == std::string::npos) continue;
      // Its name is gone (the process removed it after its report, or
      // another process did while it runs), its pages are still the
      // process's: read through the mapping (/proc/PID/map_files/RANGE)
      // where this user may.
      removed = path.substr(0, path.size() - 10);
      const fs::path mapping = "/proc/" + std::to_string(pid) + "/map_files/" + line.substr(0, line.find(' '));
      try {
        LiveFile file(mapping.string(), LiveFile::CutFile::kReadAsFarAsItGoes);
        if (file.region().header.pid != pid) continue;
        if (file.region().header.state.load(std::memory_order_acquire) != kLiveExited) return mapping;
        finished = true;
      } catch (const std::exception&) {
      }
      continue;
    }
    if (path.size() < 5 || path.compare(path.size() - 5, 5, ".live") != 0) continue;
    // The kernel writes a newline of a mapped file's name as \012 (the only
    // byte it escapes there): the name as it is on disk, and as written.
    std::string on_disk;
    for (std::size_t at = 0; at < path.size();) {
      const bool newline = path.compare(at, 4, "\\012") == 0;
      on_disk += newline ? '\n' : path[at];
      at += newline ? 4 : 1;
    }
    for (const std::string& candidate : {on_disk, path}) {
      try {
        LiveFile file(candidate, LiveFile::CutFile::kReadAsFarAsItGoes);
        if (file.region().header.pid == pid) return fs::path(candidate);
      } catch (const std::exception&) {
        // A live file the process maps (made whole by its library) that is
        // now too short: another process cut it.
        std::error_code error;
        const std::uintmax_t size = fs::file_size(candidate, error);
        if (!error && size < kLiveRegionV1Bytes) cut = candidate + " was cut to " + std::to_string(size) + " bytes";
      }
    }
  }
  if (!cut.empty()) {
    why = "the live file of process " + std::to_string(pid) + ", " + cut +
          " by another process (truncated): nothing of its heap line is there to show (the process keeps it in "
          "memory, for its report at exit)";
    return std::nullopt;
  }
  if (finished) {
    why = "process " + std::to_string(pid) + " has finished its heapline report (its live file is removed)";
  } else if (!removed.empty()) {
    why = "the live file of process " + std::to_string(pid) + ", " + terminal_text(removed) +
          ", is removed, and this user cannot read it through the process's mapping: the process has written its "
          "report, or another process removed the file while it runs";
  } else {
    why = "process " + std::to_string(pid) +
          " has no heapline live file (not run under libheapline.so, or HEAPLINE_OUT=off)";
  }
  return std::nullopt;
}

fs::path default_converted_path(const fs::path& live_path) {
  std::string text = live_path.string();
  if (text.size() > 5 && text.compare(text.size() - 5, 5, ".live") == 0) return text.substr(0, text.size() - 5);
  return text + ".json";
}

namespace {

// The mapped figures and series of a converted report: the latest figures
// the writer published, raised by what the samples hold (a later sample may
// be on disk before its figures).
void fill_mapped(Report& report, const LiveSnapshot& s) {
  report.mapped_known = s.mapped_mode != kMappedUnknown;
  report.mapped_enabled = s.mapped_mode == kMappedOn;
  report.mapped_peak_bytes = s.figures.mapped_peak;
  report.mapped_peak_time_ns = s.figures.mapped_peak_time_ns;
  report.mapped_final_bytes = s.mapped_samples.empty() ? s.figures.mapped_live : s.mapped_samples.back().live;
  for (const Sample& sample : s.mapped_samples) {
    if (sample.max_live > report.mapped_peak_bytes) {
      report.mapped_peak_bytes = sample.max_live;
      report.mapped_peak_time_ns = sample.t_ns;
    }
  }
  report.total_peak_bytes = s.figures.total_peak;
  report.total_peak_time_ns = s.figures.total_peak_time_ns;
  auto raise_total = [&](std::int64_t bytes, std::uint64_t t_ns) {
    if (bytes > report.total_peak_bytes) {
      report.total_peak_bytes = bytes;
      report.total_peak_time_ns = t_ns;
    }
  };
  raise_total(report.peak_bytes, report.peak_time_ns);
  // The two samples that end an interval: each series held its value from
  // its own sample's time to the interval's end, so their sum was held at
  // the later of the two times.
  for (std::size_t i = 0; i < s.mapped_samples.size() && i < s.samples.size(); ++i) {
    raise_total(bounded_sum(s.samples[i].live, s.mapped_samples[i].live),
                std::max(s.samples[i].t_ns, s.mapped_samples[i].t_ns));
  }
  report.mapped_samples = s.mapped_samples.data();
  report.mapped_sample_count = s.mapped_samples.size();
}

}  // namespace

bool copy_peak_profile(const LiveFile& file, ProfileSnapshot& out) {
  if (!file.has_peak_profile()) return false;
  const ProfileSnapshot& shared = file.region().peak_profile;
  // A writer killed mid-update leaves `seq` odd for good: after a while
  // the copy is taken as it is (the JSON writer clamps every count).
  read_consistent(shared.seq, 100000,
                  [&] { std::memcpy(static_cast<void*>(&out), static_cast<const void*>(&shared), sizeof out); });
  return out.state == kProfileTaken;
}

void write_converted_report(const LiveFile& file, const LiveSnapshot& s, const fs::path& out, const std::string& ended,
                            int signal) {
  const std::uint64_t last_t = s.samples.empty() ? s.figures.last_sample_ns : s.samples.back().t_ns;
  const std::int64_t last_live = s.samples.empty() ? s.figures.live : s.samples.back().live;
  std::int64_t peak = s.figures.peak;
  std::uint64_t peak_time = s.figures.peak_time_ns;
  for (const Sample& sample : s.samples) {
    if (sample.max_live > peak) {
      peak = sample.max_live;
      peak_time = sample.t_ns;
    }
  }
  Report report{};
  report.pid = s.pid;
  report.ppid = s.ppid;
  report.exe = s.exe.c_str();
  report.start_unix_ns = s.start_unix_ns;
  report.duration_ns = last_t;
  report.allocator = s.allocator.c_str();
  report.size_basis = s.size_basis.c_str();
  report.exact = s.exact;
  report.bound_bytes = s.bound_bytes;
  report.budget_floor_bytes = s.budget_floor_bytes;
  report.budget_divisor = s.budget_divisor;
  report.budget_bytes =
      s.budget_divisor == 0 ? 0 : precision_budget_bytes(s.budget_floor_bytes, s.budget_divisor, peak);
  report.max_threshold_bytes = s.exact ? 1 : s.figures.max_threshold_bytes;
  report.max_threads = s.figures.max_threads;
  report.peak_bytes = peak;
  report.peak_time_ns = peak_time;
  // The last figure known: the published live heap at the last sample
  // (within the precision bound; the threads' pending bytes died with them).
  report.final_bytes = last_live;
  report.alloc_calls = s.figures.calls[0];
  report.free_calls = s.figures.calls[1];
  report.realloc_calls = s.figures.calls[2];
  report.publishes = s.figures.publishes;
  report.interval_ns = s.interval_ns;
  report.samples = s.samples.data();
  report.sample_count = s.samples.size();
  fill_mapped(report, s);
  if (s.figures.resident_live >= 0) {
    report.resident_peak_bytes = s.figures.resident_peak;
    report.resident_peak_time_ns = s.figures.resident_peak_time_ns;
    report.resident_final_bytes = s.figures.resident_live;
    report.resident_samples = s.resident_samples.data();
    report.resident_sample_count = s.resident_samples.size();
  }
  report.markers = file.region().markers;
  report.marker_slots = file.region().header.markers_claimed.load(std::memory_order_acquire);
  report.ended = ended.c_str();
  report.last_sample_ns = last_t;
  report.signal = signal;
  // The latest peak profile (version 2 files), copied under its seqlock.
  auto profile = std::make_unique<ProfileSnapshot>();
  SamplingReport sampling;
  if (copy_peak_profile(file, *profile)) {
    sampling.mean_bytes = profile->mean_bytes;
    sampling.unwinder = "unknown";  // a live file does not say
    sampling.peak_profile = profile.get();
    report.sampling = &sampling;
  }
  int error = write_report_file(out.c_str(), report);
  if (error != 0) throw std::runtime_error("cannot write " + out.string() + ": " + report_error_text(error));
}

std::string render_top(const LiveSnapshot& s, bool running, std::size_t width) {
  std::uint64_t now_ns = s.samples.empty() ? s.figures.last_sample_ns : s.samples.back().t_ns;
  if (running) {
    // A quiet process takes no samples: the chart runs to the present.
    timespec clock{};
    clock_gettime(CLOCK_REALTIME, &clock);
    const std::uint64_t unix_now = static_cast<std::uint64_t>(clock.tv_sec) * 1'000'000'000u +
                                   static_cast<std::uint64_t>(clock.tv_nsec);
    if (unix_now > s.start_unix_ns) now_ns = std::max(now_ns, unix_now - s.start_unix_ns);
  }
  std::string text = "heapline top: pid " + std::to_string(s.pid) + " " + terminal_text(s.exe) + " — " +
                     (running    ? "running"
                      : s.exited ? "exited"
                                 : "ended without exit") +
                     ", " + human_seconds(static_cast<std::int64_t>(now_ns)) + "\n";
  text += "live " + human_bytes(s.figures.live) + "   peak " + human_bytes(s.figures.peak) + " at " +
          human_seconds(static_cast<std::int64_t>(s.figures.peak_time_ns)) + "   precision " +
          (s.exact ? std::string("exact")
                   : "+/-" + human_bytes(static_cast<std::int64_t>(s.bound_bytes))) +
          "\n";
  const bool mapped = s.mapped_mode == kMappedOn;
  if (mapped) {
    text += "mapped " + human_bytes(s.figures.mapped_live) + "   peak " + human_bytes(s.figures.mapped_peak) + " at " +
            human_seconds(static_cast<std::int64_t>(s.figures.mapped_peak_time_ns)) + "   heap + mapped " +
            human_bytes(s.figures.live + s.figures.mapped_live) + "   peak " + human_bytes(s.figures.total_peak) +
            " at " + human_seconds(static_cast<std::int64_t>(s.figures.total_peak_time_ns)) + "\n";
  } else {
    text += s.mapped_mode == kMappedOff ? "mapped memory: not counted (HEAPLINE_MAPPED=off)\n" : "";
  }
  if (s.figures.resident_live >= 0) {
    text += "resident " + human_bytes(s.figures.resident_live) + "   peak " + human_bytes(s.figures.resident_peak) +
            " at " + human_seconds(static_cast<std::int64_t>(s.figures.resident_peak_time_ns)) +
            " (as read at samples)\n";
  }
  text += std::to_string(s.samples.size()) + " samples, every " +
          human_seconds(static_cast<std::int64_t>(s.interval_ns)) + "; calls " +
          std::to_string(s.figures.calls[0] + s.figures.calls[1] + s.figures.calls[2]);
  // The calls are counted at the samples the process takes (its threads'
  // counts, summed then); the heap line's last point may be the interval
  // still open, published since without a count.
  if (!s.samples.empty() && s.samples.back().t_ns > s.figures.last_sample_ns) {
    text += " as of its sample at " + human_seconds(static_cast<std::int64_t>(s.figures.last_sample_ns)) +
            " (the heap line goes on to " + human_seconds(static_cast<std::int64_t>(s.samples.back().t_ns)) + ")";
  }
  text += "\n";
  text += "markers:";
  if (s.markers.empty()) text += " none";
  const std::size_t first = s.markers.size() > 5 ? s.markers.size() - 5 : 0;
  if (first > 0) text += " ... " + std::to_string(first) + " earlier;";
  for (std::size_t i = first; i < s.markers.size(); ++i) {
    // Piece by piece: GCC 12 warns (-Wrestrict, a false positive) on
    // "literal" + std::string&& here.
    text += ' ';
    text += terminal_text(s.markers[i].second);
    text += " @ ";
    text += human_seconds(static_cast<std::int64_t>(s.markers[i].first));
    if (i + 1 < s.markers.size()) text += ',';
  }
  text += "\n";

  // The chart: each column the most held in its time slice, eight rows up
  // to the largest; '|' under a column holding a marker. While mapped
  // memory is counted, heap + mapped: each series in its own columns, at
  // its own times (a mapping shows when it was made), the sum of both
  // maxima an upper bound of the sum's.
  constexpr std::size_t kRows = 8;
  if (width < 10) width = 10;
  const double span = now_ns > 0 ? static_cast<double>(now_ns) : 1.0;
  auto column_of = [&](std::uint64_t t) {
    std::size_t c = static_cast<std::size_t>(static_cast<double>(t) / span * static_cast<double>(width - 1));
    return std::min(c, width - 1);
  };
  // A series' most in each column: its samples' maxima there, and in a
  // column without one, the value its latest sample left.
  auto series_columns = [&](const std::vector<Sample>& series) {
    std::vector<std::int64_t> most(width, -1), left(width, -1);
    for (const Sample& sample : series) {
      const std::size_t c = column_of(sample.t_ns);
      most[c] = std::max({most[c], sample.live, sample.max_live});
      left[c] = sample.live;
    }
    std::int64_t carried = 0;
    for (std::size_t c = 0; c < width; ++c) {
      if (most[c] < 0) most[c] = carried;
      if (left[c] >= 0) carried = left[c];
    }
    return most;
  };
  std::vector<std::int64_t> columns = series_columns(s.samples);
  if (mapped) {
    const std::vector<std::int64_t> mapped_columns = series_columns(s.mapped_samples);
    for (std::size_t c = 0; c < width; ++c) columns[c] += mapped_columns[c];
  }
  std::int64_t top = 1;
  for (const std::int64_t value : columns) top = std::max(top, value);
  for (std::size_t row = kRows; row > 0; --row) {
    const double threshold = static_cast<double>(top) * (static_cast<double>(row) - 0.5) / kRows;
    std::string line(width, ' ');
    for (std::size_t c = 0; c < width; ++c) {
      if (static_cast<double>(columns[c]) >= threshold) line[c] = '#';
    }
    std::string label = row == kRows ? human_bytes(top) : row == 1 && mapped ? "heap+map" : "";
    label.resize(10, ' ');
    text += label + "|" + line + "\n";
  }
  std::string axis(width, '-');
  for (const auto& marker : s.markers) axis[column_of(marker.first)] = '|';
  text += std::string(10, ' ') + "+" + axis + "\n";
  std::string scale = "0 s";
  std::string end = human_seconds(static_cast<std::int64_t>(now_ns));
  scale.resize(width + 1 > end.size() ? width + 1 - end.size() : 0, ' ');
  text += std::string(10, ' ') + scale + end + "\n";
  return text;
}

}  // namespace heapline::launcher
