// Running the command: fork, set up the environment in the child, exec, and
// wait.
//
// While it waits, the launcher forwards the signals that are meant to stop
// the command (SIGTERM, SIGINT, SIGHUP, SIGQUIT) when another process sent
// them to the launcher alone (kill, a service manager, timeout); a signal
// the terminal sent reaches the command's process group by itself and is
// not sent twice. The launcher itself is not stopped by them: it still
// prints the summary after the command ends. Should the launcher die all the
// same (SIGKILL), the command gets SIGTERM rather than running on orphaned.
//
// Processes of the run whose parent ended are adopted by the launcher
// (PR_SET_CHILD_SUBREAPER). When asked (WaitWatch::on_waiting_for_adopted),
// the launcher waits for them too after the command ends, unless a stop
// signal came; one during that wait ends it.
#pragma once

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace heapline::launcher {

struct ChildResult {
  int exit_status = 0;    // what the launcher exits with: the code, or 128+signal
  bool started = false;   // false when exec failed (127: not found, 126: not executable)
  pid_t pid = -1;
  // The processes of the run the launcher adopted that still ran when it
  // stopped waiting (a stop signal, or --follow command).
  std::vector<pid_t> left_running;
};

// Something else to watch while the command runs: `on_ready` is called when
// `fd` is readable (and once more after the command ended).
struct WaitWatch {
  int fd = -1;
  std::function<void()> on_ready;
  std::function<void(pid_t)> on_started;  // in the launcher, as soon as the command's pid is known
  // Set: after the command, the launcher also waits for the processes it
  // left running (which it adopted), and calls this once when there are
  // some. Unset: the run ends with the command.
  std::function<void()> on_waiting_for_adopted;
};

// prepare_child runs in the child after fork and before exec, with the pid
// of the child; it sets the environment.
ChildResult run_command(const std::vector<std::string>& argv, const std::function<void(pid_t)>& prepare_child,
                        const WaitWatch& watch = {});

// Why exec of `program` failed with `error`, as a shell would say it
// ("cannot run PROGRAM: WHY", for say), and the shell's status (127: not found, including a missing #! interpreter or ELF
// loader; 126: found but not executable).
struct ExecFailure {
  std::string message;
  int status;
};
ExecFailure describe_exec_failure(const std::string& program, int error);

// Why LD_PRELOAD cannot bring a library into `program` (found on PATH as
// exec would; heapline/preload_check.h decides and words it): "PATH:
// statically linked: no loader runs", "PATH (its interpreter INTERPRETER):
// set-user-ID: ...", or "" when nothing is known against it.
std::string why_preload_cannot_apply(const std::string& program);

// "" when `path` is an ELF shared object; else what it is instead.
std::string shared_object_problem(const std::string& path);

// Runs a helper (gnuplot) and waits; returns its exit status, 127 when it
// could not be started.
int run_helper(const std::vector<std::string>& argv);

}  // namespace heapline::launcher
