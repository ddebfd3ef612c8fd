#include "stale_files.h"

#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <stdexcept>
#include <system_error>

#include <heapline/regular_file.h>
#include <heapline/report_reader.h>

#include "live_view.h"

namespace fs = std::filesystem;

namespace heapline::launcher {

namespace {

// A regular file (not a link to one) of this user; `info` gets its identity.
bool own_regular_file(const fs::path& path, struct stat& info) {
  return ::lstat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) && info.st_uid == ::geteuid();
}

// Removes `path` only if it is still the file `before` described: another
// process may have created a new file under the name meanwhile.
bool remove_if_unchanged(const fs::path& path, const struct stat& before) {
  struct stat now;
  if (::lstat(path.c_str(), &now) != 0 || now.st_dev != before.st_dev || now.st_ino != before.st_ino) return false;
  return ::unlink(path.c_str()) == 0;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() && text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// The live file's first word: its magic once the writer published its
// identity (the writer sizes the file, then publishes the magic last), 0
// before; 1 when it cannot be read (too short, unreadable).
std::uint64_t magic_of(const fs::path& path, const struct stat& info) {
  if (info.st_size == 0) return 0;
  const RegularFile file = RegularFile::open(path.string());
  std::uint64_t magic = 1;
  if (!file.ok() || ::pread(file.fd(), &magic, sizeof magic, 0) != static_cast<ssize_t>(sizeof magic)) return 1;
  return magic;
}

// Whether some process (of those this user may inspect) has the file
// `info` describes open or mapped.
bool open_or_mapped_anywhere(const struct stat& info) {
  std::error_code error;
  for (const fs::directory_entry& process : fs::directory_iterator("/proc", error)) {
    const std::string name = process.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::error_code fd_error;
    for (const fs::directory_entry& fd : fs::directory_iterator(process.path() / "fd", fd_error)) {
      struct stat target;
      if (::stat(fd.path().c_str(), &target) == 0 && target.st_dev == info.st_dev && target.st_ino == info.st_ino) {
        return true;
      }
    }
    for (const fs::directory_entry& mapping : fs::directory_iterator(process.path() / "map_files", fd_error)) {
      struct stat target;
      if (::stat(mapping.path().c_str(), &target) == 0 && target.st_dev == info.st_dev && target.st_ino == info.st_ino) {
        return true;
      }
    }
  }
  return false;
}

// What is known of a live file without its identity, as clean says it:
// whether it is empty, its age, and whether a process has it open. Why it
// has no identity is not known (a writer killed while making it, one that
// stopped, a file made by another program), so it is not said.
std::string headerless_facts(const struct stat& info, bool& open) {
  const long age = static_cast<long>(::time(nullptr) - info.st_mtime);
  open = open_or_mapped_anywhere(info);
  return std::string(info.st_size == 0 ? "empty" : "its header never written") + ", last written " +
         std::to_string(age < 0 ? 0 : age) + " s ago, " +
         (open ? "open or mapped by a process" : "no process has it open or mapped");
}

}  // namespace

LiveFileState live_file_state(const fs::path& path, pid_t& pid, std::string* why) {
  struct stat info;
  if (!own_regular_file(path, info)) return LiveFileState::kNotOurs;
  try {
    LiveFile file(path);
    pid = file.region().header.pid;
  } catch (const std::exception& problem) {
    const std::uint64_t magic = magic_of(path, info);
    if (magic == kLiveMagic) {  // heapline's, but no reader takes it
      if (why != nullptr) *why = problem.what();
      return LiveFileState::kDamaged;
    }
    if (magic != 0) return LiveFileState::kNotOurs;
    const bool old = ::time(nullptr) - info.st_mtime >= kHalfCreatedAfterSeconds;
    return old && !open_or_mapped_anywhere(info) ? LiveFileState::kHalfCreated : LiveFileState::kBeingCreated;
  }
  if (pid <= 0 || !process_alive(pid)) return LiveFileState::kGone;
  // The pid exists: it is the writer only if it has this very file mapped.
  // When its mappings cannot be read (another user's process), it may be.
  std::string unmapped;
  const auto mapped = find_live_file(pid, unmapped);
  if (!mapped) {
    return unmapped.rfind("cannot read", 0) == 0 ? LiveFileState::kRunning : LiveFileState::kGone;
  }
  std::error_code error;
  return fs::equivalent(*mapped, path, error) || error ? LiveFileState::kRunning : LiveFileState::kGone;
}

CleanOutcome clean_directory(const fs::path& dir, const CleanOptions& options) {
  std::error_code error;
  fs::directory_iterator entries(dir, error);
  if (error) throw std::runtime_error("cannot read " + dir.string() + ": " + error.message());
  CleanOutcome outcome;
  for (const fs::directory_entry& entry : entries) {
    const fs::path path = entry.path();
    const std::string name = path.filename().string();
    struct stat info;
    if (ends_with(name, ".live")) {
      pid_t pid = 0;
      std::string why;
      const LiveFileState state = live_file_state(path, pid, &why);
      if (state == LiveFileState::kNotOurs) continue;  // not heapline's, or not this user's: not a word
      if (state == LiveFileState::kDamaged) {  // heapline's, and what it holds cannot be read: kept, and said why
        outcome.kept.push_back(why);
        continue;
      }
      if (state == LiveFileState::kRunning) {
        outcome.kept.push_back(path.string() + ": process " + std::to_string(pid) + " is running");
        continue;
      }
      if (state == LiveFileState::kBeingCreated || state == LiveFileState::kHalfCreated) {
        if (!own_regular_file(path, info)) continue;
        bool open = false;
        const std::string facts = headerless_facts(info, open);
        if (state == LiveFileState::kBeingCreated) {
          outcome.kept.push_back(path.string() + ": no identity (" + facts + "; removed once " +
                                 std::to_string(kHalfCreatedAfterSeconds) +
                                 " s old and no process has it open or mapped)");
        } else if (options.dry_run || remove_if_unchanged(path, info)) {
          outcome.removed.push_back(path.string() + " (no identity: " + facts + ")");
        }
        continue;
      }
      std::string program;
      try {
        program = fs::path(take_snapshot(LiveFile(path), false).exe).filename().string();
      } catch (const std::exception&) {
        program = "?";
      }
      if (!own_regular_file(path, info)) continue;
      if (options.dry_run || remove_if_unchanged(path, info)) {
        outcome.removed.push_back(path.string() + " (pid " + std::to_string(pid) + ", " + program + ")");
      }
    } else if (options.reports && ends_with(name, ".json") && own_regular_file(path, info)) {
      const ReportReading reading = read_report_file(path.string());
      if (reading.problem == ReportProblem::kNotJson || reading.problem == ReportProblem::kNotThisFormat ||
          reading.problem == ReportProblem::kEmpty) {
        continue;  // not heapline's: not a word
      }
      if (!reading) {  // heapline's, but broken or unreadable: kept, and said why
        outcome.kept.push_back(reading.error);
        continue;
      }
      const ParsedReport& report = *reading.report;
      // A snapshot of a process that still runs, or a name a running
      // process has claimed for its report: left alone.
      pid_t writer = 0;
      const bool snapshot_of_running = report.ended == kEndedRunning && process_alive(report.pid);
      if (snapshot_of_running || (fs::exists(path.string() + ".live") &&
                                  live_file_state(path.string() + ".live", writer) == LiveFileState::kRunning)) {
        outcome.kept.push_back(path.string() + ": a running process writes it");
        continue;
      }
      if (options.dry_run || remove_if_unchanged(path, info)) {
        outcome.removed.push_back(path.string() + " (pid " + std::to_string(report.pid) + ", " +
                                  terminal_text(fs::path(report.exe).filename().string(), 64) + ")");
      }
    }
  }
  return outcome;
}

}  // namespace heapline::launcher
