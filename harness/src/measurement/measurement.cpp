#include "heapline_bench/measurement/measurement.h"


#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <heapline/option_values.h>

#include <heapline/live_format.h>
#include <heapline/preload_check.h>
#include <heapline/report_reader.h>
#include <heapline/say.h>
#include <heapline/shared_object.h>

namespace heapline::bench {
namespace {

std::string quoted_command(const std::vector<std::string>& argv) {
  std::string out;
  for (const auto& word : argv) {
    if (!out.empty()) out += ' ';
    out += word.find_first_of(" \t'\"") == std::string::npos ? word : "'" + word + "'";
  }
  return out;
}

using heapline::indented;

std::string describe_failure(const MeasurementRequest& request, const PlannedRun& run, int run_number,
                             const RunResult& result) {
  std::ostringstream out;
  out << request.scenario << ": ";
  if (run.warmup()) out << "the warm-up run ";
  else out << "run " << run_number << " of " << request.runs << ' ';
  out << (run.side == Side::with_library ? "with" : "without") << " the library ";
  out << how_it_ended(result);
  out << ".\n  command: " << quoted_command(request.command);
  if (!result.stderr_tail.empty()) out << "\n  its stderr ended with:\n" << indented(result.stderr_tail);
  out << "\n  Fix the command so that it exits 0 on its own; nothing was recorded.";
  return out.str();
}

// ld.so says so first thing on stderr; a chatty program may push it out of
// the tail, so both ends are looked at.
bool refused_by_loader(const RunResult& result) {
  constexpr const char* kMessage = "cannot be preloaded";
  return result.stderr_head.find(kMessage) != std::string::npos ||
         result.stderr_tail.find(kMessage) != std::string::npos;
}

}  // namespace

void expects(bool holds, const char* what) {
  if (!holds) throw PreconditionFailed(std::string("precondition broken: ") + what);
}

const char* side_name(Side side) { return side == Side::with_library ? "with" : "without"; }

std::vector<PlannedRun> interleaved_plan(int runs) {
  expects(runs >= 1, "interleaved_plan: runs >= 1");
  std::vector<PlannedRun> plan;
  plan.reserve(2 * static_cast<std::size_t>(runs) + 2);
  plan.push_back({-1, Side::without_library});
  plan.push_back({-1, Side::with_library});
  for (int pair = 0; pair < runs; ++pair) {
    const bool with_first = pair % 2 == 1;
    plan.push_back({pair, with_first ? Side::with_library : Side::without_library});
    plan.push_back({pair, with_first ? Side::without_library : Side::with_library});
  }
  return plan;
}

double interval_half_width(double figure, const Interval& interval) {
  return std::max(figure - interval.low, interval.high - figure);
}

std::optional<LibraryRunReport> collect_library_reports(const std::string& directory) {
  std::optional<LibraryRunReport> total;
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = file.path().filename().string();
    if (name.rfind("heapline.", 0) != 0 || name.size() < 5 || name.substr(name.size() - 5) != ".json") continue;
    // Not a report of this heapline (another library's file): not counted.
    if (const heapline::ReportReading reading = heapline::read_report_file(file.path().string())) {
      const heapline::ParsedReport::Calls& calls = reading.report->calls;
      if (!total) total = LibraryRunReport{};
      total->calls += calls.alloc + calls.free + calls.realloc;
      total->publishes += reading.report->publishes;
    }
    std::filesystem::remove(file.path(), ec);
  }
  return total;
}

namespace {

// The loader's trace of the last image the process ran: its lines after the
// one before last "transferring control:" (each ld.so of the process, one
// per exec, appends to the same file). The program it names ("" when the
// trace does not say). A wrapper that loaded the library and then exec'd
// the program without it (env -u LD_PRELOAD, env -i) showed the library
// loaded in its own part of the trace.
std::vector<std::string> last_image_trace(const std::string& prefix, int pid, std::string* program) {
  std::ifstream trace(prefix + "." + std::to_string(pid));
  std::vector<std::string> lines, last;
  std::string line;
  while (std::getline(trace, line)) lines.push_back(line);
  // The start of the last image's part: after the last "transferring
  // control:" before the last "initialize program:" (an image's library
  // lookups after its own transfer belong to it, not to a next image).
  std::size_t last_start = std::string::npos;
  for (std::size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find("initialize program:") != std::string::npos) last_start = i;
  std::size_t last_transfer = std::string::npos;
  for (std::size_t i = 0; last_start != std::string::npos && i < last_start; ++i)
    if (lines[i].find("transferring control:") != std::string::npos) last_transfer = i;
  const std::size_t start = last_transfer == std::string::npos ? 0 : last_transfer + 1;
  last.assign(lines.begin() + static_cast<std::ptrdiff_t>(start), lines.end());
  if (program != nullptr) {
    program->clear();
    for (const std::string& l : last)
      if (const auto at = l.find("initialize program: "); at != std::string::npos)
        *program = l.substr(at + std::strlen("initialize program: "));
  }
  return last;
}

}  // namespace

namespace {

// What stops ld.so from preloading anything into `program` (a static
// program, secure mode), or "" when nothing does.
std::string preload_blocked(const std::string& program) {
  char file[PATH_MAX];  // the program, or the interpreter of a script
  switch (const PreloadBlocker blocker = preload_blocker_of(program.c_str(), file, sizeof file)) {
    case PreloadBlocker::set_user_id:
    case PreloadBlocker::set_group_id:
    case PreloadBlocker::file_capabilities:
      return file + std::string(": ") + preload_blocker_text(blocker) +
             " (secure mode, where ld.so preloads no library named by a path and writes no trace). Measure an "
             "ordinary copy of it";
    case PreloadBlocker::statically_linked:
      return file + std::string(": ") + preload_blocker_text(blocker) + ", so nothing can be preloaded";
    default:
      return "";
  }
}

// Why the trace of the run `pid` does not show `library` loaded into
// `program`, as far as can be told: a program that cannot preload (static,
// secure mode), a trace that was never written or is empty (a full file
// system), or a command that removed the library from LD_PRELOAD.
std::string why_not_loaded(const std::string& trace_prefix, int pid, const std::string& program,
                           const std::string& library) {
  const std::string trace = trace_prefix + "." + std::to_string(pid);
  const std::string scratch = std::filesystem::path(trace_prefix).parent_path().string();
  struct statvfs space {};
  const bool full = statvfs(scratch.c_str(), &space) == 0 && (space.f_bavail == 0 || space.f_favail == 0);
  const std::string full_text = "the file system of " + scratch + " is full";
  std::error_code ec;
  if (!std::filesystem::exists(trace, ec)) {
    if (const std::string blocked = preload_blocked(program); !blocked.empty()) return blocked;
    return "ld.so wrote no trace (" + trace + " does not exist): " +
           (full ? full_text : "the command removed LD_DEBUG_OUTPUT from its environment, or the trace could not be "
                               "created");
  }
  if (std::filesystem::file_size(trace, ec) == 0)
    return "ld.so's trace " + trace + " is empty: it could not be written" + (full ? " (" + full_text + ")" : "");
  std::string last_program;
  last_image_trace(trace_prefix, pid, &last_program);
  return "ld.so's trace shows " + (last_program.empty() ? std::string("the program") : last_program) +
         " loaded without " + library + ": the command (or a wrapper it runs through) removed it from LD_PRELOAD";
}

}  // namespace

std::string library_not_loaded(const std::string& libraries, const std::string& program, const LoadEvidence& seen) {
  if (!seen.untraced_reason.empty()) {
    const std::string blocked = preload_blocked(program);
    return libraries + " was not loaded into " + program + ": " + (blocked.empty() ? seen.untraced_reason : blocked);
  }
  if (!seen.trace_prefix.empty())
    for (const auto& library : preload_list(libraries))
      if (!trace_shows_library_loaded(seen.trace_prefix, seen.pid, library))
        return library + " was not loaded into " + program + ": " +
               why_not_loaded(seen.trace_prefix, seen.pid, program, library);
  // The library keeps its live file, with a note, when an image it is in
  // execs a program it cannot follow (sh -c 'exec STATIC'): the program
  // measured ran without it.
  if (!seen.exec_note.empty())
    return libraries + " was not loaded into the program " + program + " exec'd: " + seen.exec_note;
  return "";
}


bool trace_shows_library_loaded(const std::string& prefix, int pid, const std::string& library) {
  const std::string needle = "file=" + library + " [0];  generating link map";
  for (const std::string& line : last_image_trace(prefix, pid, nullptr))
    if (line.find(needle) != std::string::npos) return true;
  return false;
}

std::string exec_note_left(const std::string& directory) {
  std::string note;
  std::error_code ec;
  for (const auto& file : std::filesystem::directory_iterator(directory, ec)) {
    const std::string name = file.path().filename().string();
    if (name.size() < 5 || name.substr(name.size() - 5) != ".live") continue;
    const int fd = ::open(file.path().c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
    if (fd >= 0) {
      struct stat info {};
      if (note.empty() && ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
          static_cast<std::size_t>(info.st_size) >= sizeof(heapline::LiveHeader)) {
        void* map = ::mmap(nullptr, sizeof(heapline::LiveHeader), PROT_READ, MAP_PRIVATE, fd, 0);
        if (map != MAP_FAILED) {
          const auto* header = static_cast<const heapline::LiveHeader*>(map);
          if (header->magic.load(std::memory_order_acquire) == heapline::kLiveMagic)
            note.assign(header->exec_note, strnlen(header->exec_note, sizeof header->exec_note));
          ::munmap(map, sizeof(heapline::LiveHeader));
        }
      }
      ::close(fd);
    }
    std::filesystem::remove(file.path(), ec);
  }
  return note;
}

std::string checked_preload_library(const std::string& path) {
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(path, ec);
  if (ec) throw Refusal("library " + path + " does not exist. Build it (tools/build.sh) or pass the path of a shared object.");
  unsigned elf_type = 0;
  switch (shared_object_problem_of(absolute.string(), &elf_type)) {
    case SharedObjectProblem::none:
      return absolute.lexically_normal().string();
    case SharedObjectProblem::missing:
      throw Refusal("library " + path + " does not exist. Build it (tools/build.sh) or pass the path of a shared object.");
    case SharedObjectProblem::not_regular_file:
      throw Refusal("library " + path + " is not a regular file.");
    case SharedObjectProblem::unreadable:
      throw Refusal("library " + path + " cannot be read, or is too short to be a shared object.");
    case SharedObjectProblem::not_elf:
      throw Refusal("library " + path + " is not an ELF file, so ld.so cannot preload it.");
    case SharedObjectProblem::not_elf64:
    case SharedObjectProblem::other_machine:
      throw Refusal("library " + path + " is built for another machine than this one.");
    case SharedObjectProblem::not_shared_object:
      throw Refusal("library " + path + " is not a shared object (ELF type " + std::to_string(elf_type) +
                    "); LD_PRELOAD needs a .so.");
  }
  throw Refusal("library " + path + " cannot be preloaded.");
}

std::vector<std::string> preload_list(const std::string& list) {
  // The options' list rule (heapline/option_values.h): an empty part or a
  // library named twice is a mistake, never skipped.
  std::vector<std::string> libraries;
  std::string_view repeated;
  switch (heapline::read_list(list, ':', [&](std::string_view part) { libraries.emplace_back(part); }, &repeated)) {
    case heapline::ListProblem::kNone: return libraries;
    case heapline::ListProblem::kEmpty: throw Refusal("no library given to preload ('" + list + "').");
    case heapline::ListProblem::kEmptyPart:
      throw Refusal("the libraries to preload, '" + list + "', have an empty part (a ':' first, last or beside another).");
    case heapline::ListProblem::kRepeated:
      throw Refusal("the libraries to preload, '" + list + "', name " + std::string(repeated) + " twice.");
  }
  return libraries;
}

std::string checked_preload_libraries(const std::string& list) {
  const auto libraries = preload_list(list);
  std::string joined;
  for (const auto& library : libraries) {
    if (!joined.empty()) joined += ':';
    joined += checked_preload_library(library);
  }
  return joined;
}

std::string resolved_program(const std::string& program) {
  if (program.empty()) throw Refusal("the command is empty.");
  auto executable = [](const std::filesystem::path& candidate) {
    std::error_code ec;
    return std::filesystem::is_regular_file(candidate, ec) && access(candidate.c_str(), X_OK) == 0;
  };
  if (program.find('/') != std::string::npos) {
    auto absolute = std::filesystem::absolute(program).lexically_normal();
    if (!executable(absolute)) throw Refusal("command not found or not executable: " + program);
    return absolute.string();
  }
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    auto candidate = std::filesystem::path(dir.empty() ? "." : dir) / program;
    if (executable(candidate)) return std::filesystem::absolute(candidate).lexically_normal().string();
  }
  throw Refusal("command not found: " + program + " (searched PATH)");
}

Measurement measure(ProcessRunner& runner, const MeasurementRequest& request, const ProgressCallback& progress) {
  expects(request.runs >= 1, "measure: runs >= 1");
  expects(!request.command.empty(), "measure: a command");
  expects(request.until_half_width == 0 || request.max_runs >= request.runs, "measure: max_runs >= runs");
  const bool aa = request.library.empty();
  const std::string trace_prefix = request.scratch_directory + "/ld-trace";

  Measurement measurement;
  measurement.request = request;
  auto plan = interleaved_plan(request.runs);
  double timed_seconds = 0;
  int timed_runs = 0;

  auto precise_enough = [&] {
    std::vector<double> with, without;
    for (const auto& r : measurement.with_runs)
      with.push_back(request.until_ci_cpu ? r.user_seconds + r.system_seconds : r.wall_seconds);
    for (const auto& r : measurement.without_runs)
      without.push_back(request.until_ci_cpu ? r.user_seconds + r.system_seconds : r.wall_seconds);
    for (double v : without)
      if (!(v > 0)) return true;  // no CPU times to narrow: stop at RUNS
    return interval_half_width(overhead_ratio(with, without), bootstrap_overhead_interval(with, without)) <=
           request.until_half_width;
  };
  for (std::size_t index = 0; index < plan.size(); ++index) {
    const PlannedRun run = plan[index];
    if (progress) {
      const int remaining = static_cast<int>(plan.size() - index);
      const double left = timed_runs > 0 ? timed_seconds / timed_runs * remaining : -1;
      progress({&request, static_cast<int>(index), static_cast<int>(plan.size()), run, left});
    }
    RunSpec spec;
    spec.argv = request.command;
    spec.env = request.env;
    spec.settings_from_env_only = true;
    spec.working_directory = request.working_directory;
    // heapline's own output files go to the scratch directory on both sides,
    // so the environment differs between the sides by LD_PRELOAD alone.
    spec.env["HEAPLINE_OUT"] = request.scratch_directory + "/heapline.%e.%p.json";
    const bool with = run.side == Side::with_library && !aa;
    const std::string& front = with ? request.library : request.floor;
    if (!front.empty() || !request.preload_after.empty()) {
      const auto inherited = spec.env.count("LD_PRELOAD") ? spec.env["LD_PRELOAD"]
                             : std::getenv("LD_PRELOAD") ? std::string(std::getenv("LD_PRELOAD"))
                                                         : std::string();
      set_preload(spec.env, {front, request.preload_after, inherited});
    }
    if (with && run.warmup()) spec.ld_debug_output = trace_prefix;

    RunResult result = runner.run(spec);
    if (!result.started)
      throw Refusal(request.scenario + ": cannot run " + quoted_command(request.command) + ": " + result.start_error +
                    ". Check the command's path; nothing was recorded.");
    if (with && refused_by_loader(result))
      throw Refusal(request.scenario + ": ld.so refused to preload " + request.library + ":\n" +
                    indented(result.stderr_head.substr(0, result.stderr_head.find('\n'))) + "\n  Nothing was recorded.");
    if (!result.succeeded())
      throw Refusal(describe_failure(request, run, run.pair + 1, result));
    // Every run's live files are read and removed; a with-run's must show
    // the library in the program (its warm-up, with ld.so's trace, too).
    const std::string note = request.scratch_directory.empty() ? "" : exec_note_left(request.scratch_directory);
    if (with) {
      const LoadEvidence seen{run.warmup() ? trace_prefix : std::string(), result.pid, note, {}};
      if (const std::string absent = library_not_loaded(request.library, request.command[0], seen); !absent.empty())
        throw Refusal(request.scenario + ": " + absent + ". Nothing was recorded.");
    }
    // Each run's reports are read (with-runs) or cleared (the others) before
    // the next run writes its own.
    const auto report = request.scratch_directory.empty() ? std::nullopt
                                                          : collect_library_reports(request.scratch_directory);
    if (run.warmup()) continue;
    if (with && report) measurement.with_reports.push_back(*report);
    timed_seconds += result.wall_seconds;
    ++timed_runs;
    (run.side == Side::with_library ? measurement.with_runs : measurement.without_runs).push_back(result);
    const int pairs = static_cast<int>(measurement.without_runs.size());
    if (index + 1 == plan.size() && request.until_half_width > 0 && pairs < request.max_runs &&
        measurement.with_runs.size() == measurement.without_runs.size() && !precise_enough()) {
      const bool with_first = pairs % 2 == 1;
      plan.push_back({pairs, with_first ? Side::with_library : Side::without_library});
      plan.push_back({pairs, with_first ? Side::without_library : Side::with_library});
    }
  }
  measurement.request.runs = static_cast<int>(measurement.without_runs.size());

  std::vector<double> with_times, without_times;
  for (const auto& r : measurement.with_runs) with_times.push_back(r.wall_seconds);
  for (const auto& r : measurement.without_runs) without_times.push_back(r.wall_seconds);
  measurement.median_with = median(with_times);
  measurement.median_without = median(without_times);
  measurement.overhead = overhead_ratio(with_times, without_times);
  measurement.interval = bootstrap_overhead_interval(with_times, without_times, measurement.bootstrap);
  return measurement;
}

}  // namespace heapline::bench
