// Running one command and timing it as a whole process. The measurement
// logic talks to this interface only, so tests drive it with a fake runner
// (no processes, no timing) and check the order of runs.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <vector>

namespace heapline::bench {

struct RunSpec {
  std::vector<std::string> argv;
  std::map<std::string, std::string> env;  // set (or replaced) in the child
  std::string working_directory;           // empty: the harness's own
  std::string ld_debug_output;             // non-empty: LD_DEBUG=files into this prefix
  bool capture_stdout = false;             // keep what it writes on stdout (else /dev/null)
  // A measured run: the library's settings (HEAPLINE_*) come from `env`
  // alone, never from the harness's own environment (a shell that exported
  // HEAPLINE_PRECISION=exact made a point measured in exact mode, stored as
  // one of the defaults). The first run that leaves one out says so, once.
  bool settings_from_env_only = false;
};

// The one place a run's preload is set: LD_PRELOAD in `env` becomes the
// libraries given, in that order (each a path or a ':'-list as LD_PRELOAD
// takes it; an empty one is left out), replacing what the environment held.
// None at all sets it empty: the run preloads nothing.
void set_preload(std::map<std::string, std::string>& env, std::initializer_list<std::string> libraries);

// The variables the harness sets for a run itself: LD_PRELOAD
// (set_preload), HEAPLINE_OUT (the library's report, to the scratch
// directory or off), LD_DEBUG and LD_DEBUG_OUTPUT (the warm-up run's trace
// of what the loader loaded). A value given from outside, a scenario's env
// or compare --env, would replace the harness's, or be replaced by it (an
// LD_PRELOAD preloaded another library, and its failure was blamed on
// heapline): what it is for, which a refusal says; "" for any other name.
std::string set_by_the_harness(const std::string& name);

// Why the library would not take `value` for the HEAPLINE_* setting `name`
// by its own rule (heapline/library_settings.h): "HEAPLINE_X takes RULE,
// not 'VALUE'"; "" when it takes it, or `name` is not one of its settings.
// The library says such a value on the run's stderr and runs with its
// default, so a comparison of "HEAPLINE_PRECISION=bogus" measured the
// default under that label: a value passed on is checked before anything
// runs (compare --env, a scenario's env).
std::string refused_by_the_library(const std::string& name, const std::string& value);

struct RunResult {
  bool started = false;     // false: the command could not be run at all
  std::string start_error;  // why, when !started
  int exit_status = -1;     // when it exited
  int signal = 0;           // non-zero when it was killed by a signal
  int pid = 0;
  double wall_seconds = 0;  // monotonic clock around spawn -> wait
  double user_seconds = 0;
  double system_seconds = 0;
  long max_rss_kib = 0;
  std::string stderr_head;  // the start of what the command wrote on stderr (ld.so writes there)
  std::string stderr_tail;  // the end of it, for failure reports
  std::string stdout_head;  // with capture_stdout: the start of its stdout (kStdoutHead bytes at most)

  bool succeeded() const { return started && signal == 0 && exit_status == 0; }
};

// How a run ended, to follow the command's name in a sentence: "exited with
// status 3", "was killed by signal 9 (Killed)", "could not be started
// (No such file or directory)". The one wording of every failure report, so
// that a signal is never reported as a status.
std::string how_it_ended(const RunResult& result);
// how_it_ended, then what its stderr ended with when it said anything:
// ":\n" and the tail, never a colon followed by nothing.
std::string how_it_ended_and_said(const RunResult& result);

inline constexpr std::size_t kStdoutHead = 64 * 1024;

class ProcessRunner {
 public:
  virtual ~ProcessRunner() = default;
  virtual RunResult run(const RunSpec& spec) = 0;
};

// Thrown when the user interrupted the harness (SIGINT, SIGTERM, SIGHUP):
// the running command's whole process group has been killed and reaped.
struct Interrupted {
  int signal;
};

// posix_spawn + wait4: the only way heapline-bench runs a program (an
// argument vector, never a shell). Each command runs in its own process group
// with stdin on /dev/null, stdout on /dev/null (or a temporary file with
// capture_stdout), stderr kept in a temporary file for the failure report. Interrupting signals kill that process group, then throw
// Interrupted from run().
class PosixProcessRunner final : public ProcessRunner {
 public:
  PosixProcessRunner();
  ~PosixProcessRunner() override;
  RunResult run(const RunSpec& spec) override;
};

}  // namespace heapline::bench
