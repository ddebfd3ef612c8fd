// The live file's identity and its name (live_file.h makes the file, and
// live_format.h is its layout): which report name this process claims,
// taking a name over from a process that has ended, and giving the name up
// when the process execs another program. Until a file is made, and when
// none can be, the same layout lives in static memory (g_static_region) and
// one line on stderr says why.
#include <dlfcn.h>
#include <errno.h>
#include <string.h>

#include <cstddef>

#include "live_region.h"
#include "mapped_memory.h"
#include "os.h"
#include "output.h"
#include "precision_budget.h"
#include "process.h"
#include "published.h"
#include "sampling.h"
#include "slow_paths.h"
#include "thread_registry.h"

namespace heapline::accounting {

constinit LiveRegion g_static_region;
// Read by every publish, written only when the live file is created (or at
// fork): a line of its own, not the timelines' (written at every sample).
alignas(64) LiveRegion* g_region = &g_static_region;

// Whether this process's report keeps the plain name (see output.h).
bool is_root_process() {
  const int pid = os::pid();
  return !g_process.fork_child && (g_process.root_pid == 0 || g_process.root_pid == pid);
}

// Whether this library came in through LD_PRELOAD (rather than dlopen, which
// may happen while the program's threads read the environment).
bool preloaded() {
  const char* preload = os::environment("LD_PRELOAD");
  Dl_info self{};
  if (preload == nullptr || dladdr(reinterpret_cast<void*>(&preloaded), &self) == 0 || self.dli_fname == nullptr) {
    return false;
  }
  const char* slash = strrchr(self.dli_fname, '/');
  return strstr(preload, slash != nullptr ? slash + 1 : self.dli_fname) != nullptr;
}

void decide_followed(bool in_constructor) {
  Config& config = g_process.config;
  if (!config.follow_children && !is_root_process()) {
    // A process the command started: the library is loaded (LD_PRELOAD is
    // inherited) and counts, but nothing of it reaches the disk or stderr.
    g_process.followed = false;
    config.output_off = true;
    config.summary = false;
    return;
  }
  // With follow=command, the first process of a run without the launcher
  // tells the processes it starts that they are not the command, as the
  // launcher does. Only then: setenv allocates (a few dozen bytes, counted
  // in the command's heap) and the program sees the variable. Only from
  // the constructor of a preloaded library, where setenv cannot race the
  // program's threads.
  if (in_constructor && !config.follow_children && g_process.root_pid == 0 && is_root_process() && preloaded()) {
    char pid_text[24];
    TextSink text(pid_text, sizeof pid_text);
    text.append_signed(g_process.pid);
    os::set_environment("HEAPLINE_ROOT_PID", text.c_str());
    g_process.root_pid = g_process.pid;
  }
}

namespace {

// One live file is made at a time: at init and in a fork child (one thread),
// at a sample (g_sampling.busy held), around an exec (held too).
constinit PendingLiveFile g_pending;
// The report names a process may claim, in order, and the name a file left
// by an ended process is moved to.
char g_names[2][kMaxPath];
char g_aside_report[kMaxPath];
char g_aside[kMaxPath];
// The identity of a live file found at a name this process wants.
constinit LiveHeader g_found;

// `report` + ".live" into `live`. False when it does not fit.
bool live_name(const char* report, char* live) {
  const std::size_t length = strlen(report);
  if (length + 6 > kMaxPath) return false;
  memcpy(live, report, length);
  memcpy(live + length, ".live", 6);
  return true;
}

// Who has the live file found at a name.
enum class Holder {
  kNobody,       // gone meanwhile: the name is free again
  kNotOurs,      // not a regular file of this user: never touched
  kRunning,      // a process that runs (or may): its name stays its own
  kThisProcess,  // this process's earlier image, before an exec: its name is this image's
  kEnded,        // a process that has ended (killed, or its report could not be written)
  kUnfinished,   // no identity, and old: an earlier library killed while it made the file
};
struct Found {
  Holder holder;
  os::FileId id;
  int pid;
};

// A file with no identity is taken for one being made unless it is older
// than this (an earlier library made a file, then wrote its identity, in
// one allocation call).
constexpr std::int64_t kUnfinishedAfterSeconds = 60;

Found examine(const char* live) {
  Found found{Holder::kNotOurs, {}, 0};
  const int saved_errno = errno;
  const int fd = os::open_to_read(live);
  if (fd < 0) {
    if (errno == ENOENT) found.holder = Holder::kNobody;
    errno = saved_errno;
    return found;
  }
  os::FileStatus status;
  const std::size_t identity = offsetof(LiveHeader, seq);
  const bool ours = os::file_status(fd, &status) && status.own_regular_file;
  const bool whole = ours && os::read_at(fd, &g_found, identity, 0) &&
                     g_found.magic.load(std::memory_order_relaxed) == kLiveMagic;
  os::close_file(fd);
  if (!ours) return found;
  found.id = status.id;
  if (!whole) {
    const std::int64_t now_s = static_cast<std::int64_t>(clock_ns(CLOCK_REALTIME) / 1'000'000'000u);
    found.holder = status.modified_s + kUnfinishedAfterSeconds < now_s ? Holder::kUnfinished : Holder::kRunning;
    return found;
  }
  found.pid = g_found.pid;
  const std::uint64_t ticks = g_found.process_start_ticks;  // 0 in a file of an earlier library
  if (found.pid == os::pid()) {
    const bool other = ticks != 0 && g_process.start_ticks != 0 && ticks != g_process.start_ticks;
    found.holder = other ? Holder::kEnded : Holder::kThisProcess;
  } else if (!os::process_exists(found.pid)) {
    found.holder = Holder::kEnded;
  } else {
    const std::uint64_t now_ticks = os::process_start_ticks(found.pid);
    found.holder = ticks != 0 && now_ticks != 0 && ticks != now_ticks ? Holder::kEnded : Holder::kRunning;
  }
  return found;
}

const char* found_program() {
  g_found.exe[sizeof g_found.exe - 1] = 0;
  const char* slash = strrchr(g_found.exe, '/');
  return slash != nullptr ? slash + 1 : g_found.exe;
}

// "heapline: LIVE was left by process PID (PROGRAM), which has ended" and
// what became of it (the texts `then`), one line on stderr.
void say_left_by(const char* live, const Found& found, const char* const (&then)[4]) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  text.append("heapline: ");
  text.append_shown(live);
  text.append(" was left by process ");
  text.append_signed(found.pid);
  text.append(" (");
  text.append_shown(found_program());
  text.append("), which has ended");
  for (const char* part : then) text.append_shown(part);
  text.append('\n');
  write_stderr(line, text.size());
}

// Puts the pending file at `live` in place of the file `found` describes,
// which no running process writes: this process's earlier image or a file
// left unfinished (dropped: what the one held is this image's to restart,
// the other holds nothing), or the file of an ended process, kept at
// `aside`. The two names are exchanged in one step, so the name is never
// missing; when what came out is not the file examined (another process
// took the name over at the same moment) they are exchanged back. Returns 0
// or an errno (EINVAL: a filesystem that cannot exchange names).
int take_over(const char* live, const Found& found, const char* aside) {
  if (int error = os::exchange_names(g_pending.temp_path, live); error != 0) return error;
  os::FileId out;
  if (!os::file_id(g_pending.temp_path, &out) || !(out == found.id)) {
    os::exchange_names(g_pending.temp_path, live);
    return EEXIST;
  }
  if (found.holder == Holder::kEnded) {
    if (int error = os::rename_new(g_pending.temp_path, aside); error != 0) {
      os::exchange_names(g_pending.temp_path, live);
      return error;
    }
  } else {
    os::remove_name(g_pending.temp_path);
  }
  g_pending.temp_path[0] = 0;
  return 0;
}

// Where the live file of an ended process goes when its name is taken
// over: its report name with its pid inserted, so the name says whose it
// was (and `heapline convert` makes that process's report from it).
bool aside_name(const char* report, int pid) {
  copy_text(g_aside_report, sizeof g_aside_report, report);
  return insert_pid_before_extension(g_aside_report, sizeof g_aside_report - 8, pid) &&
         live_name(g_aside_report, g_aside);
}

// The first name found held by what is not a file of this user's (a link,
// a FIFO, a directory, another user's file): a report name report_names
// passed over, or a live name, for claim's line.
char g_not_ours[kMaxPath];
char g_report_not_ours[kMaxPath];

// One line when the report goes to `claimed` because what is at an earlier
// name (the report's own or its live file's) was not this user's: never
// touched, and the user would otherwise not know why the report is not
// where it was asked for.
void say_not_ours(const char* claimed) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  text.append("heapline: ");
  text.append_shown(g_not_ours);
  text.append(" is not a file of this user's (a link, a FIFO, a directory or another user's file): left as it "
              "is; the report goes to ");
  text.append_shown(claimed);
  text.append('\n');
  write_stderr(line, text.size());
}

// Places the pending file at `live`, or takes the name over when its holder
// is gone. 0, EEXIST (the name stays another's), or an errno.
int place_or_take_over(const char* report, const char* live) {
  for (int attempt = 0; attempt < 4; ++attempt) {
    int result = place_live_file(g_pending, live);
    if (result != EEXIST) return result;
    const Found found = examine(live);
    if (found.holder == Holder::kNobody) continue;  // gone meanwhile: the name again
    if (found.holder == Holder::kNotOurs) {
      if (g_not_ours[0] == 0) copy_text(g_not_ours, sizeof g_not_ours, live);
      return EEXIST;
    }
    if (found.holder == Holder::kRunning) return EEXIST;
    const bool keep_old = found.holder == Holder::kEnded;
    if (keep_old && !aside_name(report, found.pid)) return EEXIST;
    result = take_over(live, found, g_aside);
    if (result == 0 && keep_old) {
      say_left_by(live, found, {"; moved to ", g_aside, " (heapline convert makes its report)", ""});
    }
    if (result == 0) return 0;
    if (result == EEXIST) continue;  // another process took the name over meanwhile: look again
    if (!keep_old && (result == EINVAL || result == ENOSYS || result == EOPNOTSUPP)) {
      // A filesystem that cannot exchange names: removed, then claimed.
      os::remove_name(live);
      continue;
    }
    if (keep_old) {
      say_left_by(live, found, {", and cannot be moved to ", g_aside, ": ", report_error_text(result)});
    }
    return EEXIST;
  }
  return EEXIST;
}

// Gives the heap line a live file: made from `image` (mapped at `at` when
// given, see make_live_file) and placed at the first of the report names
// g_names[0, count) it can claim. On success g_process.report_path and
// live_path are the claimed names and the mapping is returned; otherwise
// nullptr, live_path empty, and *error says why.
LiveRegion* claim(const LiveRegion& image, LiveRegion* at, int count, int* error) {
  char* live = g_process.live_path;
  int result = EEXIST;
  copy_text(g_not_ours, sizeof g_not_ours, g_report_not_ours);
  for (int i = 0; i < count && result == EEXIST; ++i) {
    if (!live_name(g_names[i], live)) {
      result = ENAMETOOLONG;
      break;
    }
    if (g_pending.region == nullptr) {
      result = make_live_file(image, live, os::pid(), at, &g_pending);
      if (result != 0) break;
#if HEAPLINE_TEST_HOOKS
      // Test hook: die with the live file made but not yet named.
      if (g_process.config.kill_writer == KillWriter::kLiveBeforeRename) os::kill_this_process();
#endif
    }
    result = place_or_take_over(g_names[i], live);
    if (result == 0) {
      copy_text(g_process.report_path, sizeof g_process.report_path, g_names[i]);
      g_process.live_id = g_pending.id;
      if (g_not_ours[0] != 0) say_not_ours(g_names[i]);
    }
  }
  LiveRegion* mapped = g_pending.region;
  g_pending.region = nullptr;
  if (result == 0) return mapped;
  remove_pending_name(g_pending);
  if (mapped != nullptr && at == nullptr) release_live_region(mapped);
  live[0] = 0;
  *error = result;
  return nullptr;
}

// One line on stderr, and the report's live_file_problem, when the heap
// line stays in memory.
void say_no_live_file(const char* live, int error) {
  char* line = g_line;
  TextSink text(line, sizeof g_line);
  TextSink problem(g_process.live_file_problem, sizeof g_process.live_file_problem);
  if (error == EFBIG) {
    text.append("heapline: the file size limit (ulimit -f) is ");
    text.append_unsigned(os::file_size_limit());
    text.append(" bytes, below the ");
    text.append_unsigned(sizeof(LiveRegion));
    text.append(" bytes ");
    text.append_shown(live);
    text.append(" needs");
    problem.append("not made: the file size limit (RLIMIT_FSIZE) is ");
    problem.append_unsigned(os::file_size_limit());
    problem.append(" bytes, below the ");
    problem.append_unsigned(sizeof(LiveRegion));
    problem.append(" bytes it needs");
  } else {
    append_failure(text, "create", live, error);
    problem.append("not made: ");
    problem.append(report_error_text(error));
  }
  g_process.live_file_error = error;
  text.append("; the heap line is kept in memory only (lost if the process is killed)\n");
  problem.append("; the heap line was kept in memory only");
  problem.c_str();
  write_stderr(line, text.size());
}

// The live file's identity, in the static region.
void write_identity(LiveRegion& region) {
  const Config& config = g_process.config;
  LiveHeader& h = region.header;
  h.magic.store(0, std::memory_order_relaxed);
  h.version = kLiveVersion;
  h.header_bytes = sizeof(LiveHeader);
  h.marker_capacity = kLiveMarkerCapacity;
  h.sample_capacity = Timeline::kCapacity;
  h.file_bytes = sizeof(LiveRegion);
  h.pid = os::pid();
  h.ppid = os::parent_pid();
  h.start_unix_ns = g_process.start_unix_ns;
  h.start_mono_ns = g_process.start_mono_ns.load(std::memory_order_relaxed);
  h.process_start_ticks = g_process.start_ticks;
  h.exact = config.precision.exact ? 1 : 0;
  h.precision_rule = kPrecisionBudget;
  h.precision_bytes = config.precision.exact ? 0 : config.precision.budget_floor_bytes;
  h.precision_divisor = config.precision.exact ? 0 : config.precision.budget_divisor;
  const NextAllocator& next = next_allocator();
  copy_text(h.allocator, sizeof h.allocator, next.name);
  copy_text(h.size_basis, sizeof h.size_basis, next.size_basis);
  os::program_path(h.exe, sizeof h.exe);
  h.seq.store(0, std::memory_order_relaxed);
  // The stated precision as it stands (raised from here on where it grows),
  // and no publish yet in this file.
  h.max_threads.store(g_threads.max_registered.load(std::memory_order_relaxed), std::memory_order_relaxed);
  h.max_threshold_bytes.store(static_cast<std::uint64_t>(g_budget.max_threshold.load(std::memory_order_relaxed)),
                              std::memory_order_relaxed);
  h.bound_bytes.store(static_cast<std::uint64_t>(g_budget.bound.load(std::memory_order_relaxed)),
                      std::memory_order_relaxed);
  h.publish_mono_ns.store(0, std::memory_order_relaxed);
  h.publish_live.store(0, std::memory_order_relaxed);
  h.open_max.store(0, std::memory_order_relaxed);
  // Nor a total peak of its own yet (a fork child's copy of the static
  // region holds its parent's).
  h.total_peak_at_once.store(0, std::memory_order_relaxed);
  h.total_peak_at_once_ns.store(0, std::memory_order_relaxed);
  h.state.store(kLiveRunning, std::memory_order_relaxed);
  h.markers_claimed.store(0, std::memory_order_relaxed);
  g_process.markers_claimed.store(0, std::memory_order_relaxed);
  for (LiveMarker& marker : region.markers) marker.ready.store(0, std::memory_order_relaxed);
  h.mapped_mode = mapped::enabled() ? kMappedOn : kMappedOff;
  h.resident_series = 1;
  h.magic.store(kLiveMagic, std::memory_order_release);  // identity complete
}

// The heap line moves to the file `mapped` (the timelines go on there).
void move_to(LiveRegion* mapped) {
  attach_timelines(*mapped);
  __atomic_store_n(&g_region, mapped, __ATOMIC_RELEASE);
  guard_live_file(true);  // from now on a cut of the file never kills the process
}

// The report names this process may claim, into g_names: for the command
// the plain name, then the one with its pid; for any other process the one
// with its pid. A name at which something is not this user's regular file
// (a link, a FIFO, a directory, another user's file) is passed over, as a
// live name that is not ours is: the report goes to the next name, which
// claim says in one line (g_report_not_ours), and the heap line has its
// live file from the start all the same. Returns how many: 0 when none can
// receive a report (*refused: the first name refused then, for the line).
int report_names(const char** refused) {
  const Config& config = g_process.config;
  const int pid = os::pid();
  const char* name = program_invocation_short_name;
  int count = 0;
  g_report_not_ours[0] = 0;
  *refused = nullptr;
  for (int with_pid = is_root_process() ? 0 : 1; with_pid <= 1; ++with_pid) {
    char* report = g_names[count];
    if (!format_output_path(config.out_template, g_process.base_dir, pid, name, with_pid == 1, report, kMaxPath - 8)) {
      return count;
    }
    if (check_report_path(report) == kReportPathNotOurs) {
      // Said only when the report goes elsewhere for it: not of a fallback
      // refused after a name that was taken.
      if (count == 0 && g_report_not_ours[0] == 0) copy_text(g_report_not_ours, sizeof g_report_not_ours, report);
      continue;
    }
    if (count == 0 || strcmp(g_names[0], report) != 0) ++count;
  }
  *refused = g_report_not_ours[0] != 0 ? g_report_not_ours : nullptr;
  return count;
}

// The live file of the report name `report`, for a message.
const char* live_name_for_message(const char* report) {
  if (!live_name(report, g_aside)) copy_text(g_aside, sizeof g_aside, report);
  return g_aside;
}

// The live file left before an exec, at which the image that execs another
// gives its live file up (exec_override.cpp) and gets it back if the exec
// fails.
// (The sampling lock is held from a retire that returned true to its
// restore: the caller pairs them, exec_giving_up_live_file.)
struct ExecState {
  bool retired = false;      // the live file was removed
  std::int64_t live_file_floor = INT64_MAX;
};
ExecState g_exec;

}  // namespace

void create_deferred_live_file() {
  g_process.live_file_floor = INT64_MAX;  // once, whatever happens
  copy_text(g_names[0], sizeof g_names[0], g_process.report_path);
  int error = 0;
  // Everything so far (identity, figures, markers, timeline) moves over as
  // it is: only the holder of g_sampling.busy writes the figures and the
  // timeline, and that is this thread. A marker being written right now may
  // land in the static copy only: the exit report takes it from there.
  LiveRegion* mapped = claim(g_static_region, nullptr, 1, &error);
  if (mapped == nullptr) {
    say_no_live_file(live_name_for_message(g_names[0]), error);  // the report keeps its name
    return;
  }
  move_to(mapped);
}

// Starts this process's heap line (at init, and in a fork child, whose
// inherited mapping is its parent's file): its identity and first sample in
// static memory, then, for the command, its live file, which claims the
// report's name: the live file is made exclusively, so two running
// processes never share a name. The plain name goes to the first process of
// the run to claim it (normally the command: it starts first); a process
// that finds it taken by a running process inserts its pid, and one that
// finds it left by a process that has ended takes it over (the old file is
// kept under its own process's name, and a line on stderr says so). Any
// other process makes its live file once its heap matters
// (create_deferred_live_file). Falls back to g_static_region, with one line
// on stderr, when no file can be made. Makes no allocation: runs inside the
// first malloc call.
void open_live_file(std::uint64_t now, std::int64_t live) {
  if (g_region != &g_static_region) {  // a fork child: the parent's file
    unguard_live_file();
    release_live_region(g_region);
  }
  g_region = &g_static_region;
  guard_live_file(true);  // a new heap line, with no loss (static memory needs no guard)
  g_pending = PendingLiveFile{};  // a fork child: another thread of the parent's may have been making one
  g_exec = ExecState{};
  char* path = g_process.live_path;
  char* report = g_process.report_path;
  path[0] = 0;
  report[0] = 0;
  g_process.live_file_problem[0] = 0;
  g_process.live_file_error = 0;
  g_process.live_file_floor = INT64_MAX;
  g_process.start_ticks = os::process_start_ticks(os::pid());
  g_sampling.last_marker_ns.store(0, std::memory_order_relaxed);
  write_identity(g_static_region);
  attach_timelines(g_static_region);
  reset_timelines(g_process.config.interval_ns);
  start_timeline(now, live);

  if (g_process.config.output_off) return;
  const char* refused = nullptr;
  const int count = report_names(&refused);
  if (count == 0) {
    // Every name refused: the command says so now, while the heap line can
    // still be told to be in memory only (the exit says it again, with the
    // figures); another process's report is said at its exit alone.
    if (refused != nullptr && is_root_process()) say_no_live_file(refused, kReportPathNotOurs);
    return;
  }
  if (!is_root_process()) {
    // Not the command: its name has its pid, so nothing to claim now.
    copy_text(report, kMaxPath, g_names[0]);
    // This very process may have made one before an exec the library did
    // not see.
    if (live_name(report, path) && examine(path).holder == Holder::kThisProcess) os::remove_name(path);
    path[0] = 0;
    g_process.live_file_floor = live + kLiveFileFloor;
    return;
  }
  int error = 0;
  LiveRegion* mapped = claim(g_static_region, nullptr, count, &error);
  if (mapped == nullptr) {
    say_no_live_file(live_name_for_message(g_names[0]), error);
    return;
  }
  move_to(mapped);
}

bool remove_live_file() {
  os::FileId id;
  const char* live = g_process.live_path;
  return live[0] != 0 && os::file_id(live, &id) && id == g_process.live_id && os::remove_name(live) == 0;
}

bool live_file_to_give_up() {
  // Not before the init; nor in a vfork child, whose live file is its
  // parent's (a copy made without the fork handler is adopted first: its
  // live file is none of the parent's).
  return acts_as_itself() && (g_process.live_path[0] != 0 || g_process.live_file_floor != INT64_MAX);
}

void note_exec_not_followed(const char* path, const char* why) {
  char* note = g_region->header.exec_note;
  if (path == nullptr) {
    note[0] = 0;
    return;
  }
  // Built aside, then copied whole: the note is never read half-written by
  // this process, and a reader bounds it by its size.
  char text[sizeof g_region->header.exec_note];
  TextSink line(text, sizeof text);
  line.append(path);
  line.append(": ");
  line.append(why);
  copy_text(note, sizeof text, line.c_str());
}

bool retire_live_file_for_exec() {
  if (!live_file_to_give_up()) return false;
  // A signal handler that execs while its thread was sampling: the sample
  // in progress may be making the live file; it is left as it is.
  if (t_holds_sampling || !lock_sampling()) return false;
  // Held until the exec is done with: no sample may make a live file meanwhile.
  g_exec.live_file_floor = g_process.live_file_floor;
  g_process.live_file_floor = INT64_MAX;
  g_exec.retired = remove_live_file();
  return true;
}

void restore_live_file_after_failed_exec() {
  g_process.live_file_floor = g_exec.live_file_floor;
  if (g_exec.retired) {
    g_exec.retired = false;
    // The same names again: the file is made from the region as it is, and
    // mapped in its place (what a cut of the old one lost dropped first:
    // the new file never holds a zeroed page as samples).
    settle_cut_live_file(true);
    const char* refused = nullptr;
    const int count = report_names(&refused);
    int error = 0;
    if (count == 0) {
      // No name can receive a report now (a FIFO or a device appeared at
      // both): no live file beside it, and the exit says why, once. The
      // removed file's name is no longer the heap line's.
      g_process.report_path[0] = 0;
      g_process.live_path[0] = 0;
    } else if (claim(*g_region, g_region, count, &error) == nullptr) {
      g_process.report_path[0] = 0;  // the exit finds the name to write to
      say_no_live_file(live_name_for_message(g_names[0]), error);
    } else {
      guard_live_file(false);  // a whole file again, the losses of the old one kept
    }
  }
  unlock_sampling();
}

}  // namespace heapline::accounting
