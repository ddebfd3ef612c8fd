// Running the command: the launcher forks a keeper, which forks the command
// (environment set up in it, then exec), reaps it and tells the launcher
// how it ended.
//
// The keeper adopts the processes of the run whose parent ended
// (PR_SET_CHILD_SUBREAPER), so every process of the run stays below it,
// whatever the command does (a double fork, setsid). When the launcher dies
// without releasing it (SIGKILL, a crash: the keeper reads the end of
// their socket), the keeper stops the whole tree: SIGTERM to each process
// below it, SIGKILL to what is left after 2 s, until none is left. Should
// the keeper itself die, the launcher (a subreaper too) adopts the command
// and follows it itself.
//
// While it waits, the launcher forwards (through the keeper, which knows
// whether the command still runs, so a reused pid is never signalled) the
// signals that are meant to stop the command (SIGTERM, SIGINT, SIGHUP,
// SIGQUIT) when another process sent them to the launcher alone (kill, a
// service manager, timeout); a signal the terminal sent reaches the
// command's process group by itself and is not sent twice. The launcher
// and the keeper are not stopped by them: the launcher still prints the
// summary after the command ends.
//
// When asked (WaitWatch::on_waiting_for_adopted), the launcher waits for
// the processes the command left running too after the command ends,
// unless a stop signal came; one during that wait ends it. Whatever still
// runs then (and with --follow command) is released, left to run.
#pragma once

#include <sys/wait.h>

#include <functional>
#include <string>
#include <sys/types.h>
#include <vector>

namespace heapline::launcher {

struct ChildResult {
  int exit_status = 0;    // what the launcher exits with: the code, or 128+signal
  bool started = false;   // false when exec failed (127: not found, 126: not executable)
  pid_t pid = -1;
  pid_t keeper_pid = -1;  // the command's parent (see run_command), -1 when none was started
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

// How a helper run by run_helper ended, and what it wrote on stderr.
struct HelperResult {
  int wait_status = 0;  // as waitpid gives it; an exit status of 127: it could not be started
  std::string said;     // its stderr, at most kHelperSaidBytes of it
  bool exited(int status) const { return WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == status; }
};
constexpr std::size_t kHelperSaidBytes = 16384;

// Runs a helper (gnuplot) and waits, its stdout to /dev/null and its
// stderr captured: a helper's text reaches the terminal only through the
// door of printed lines (gnuplot echoes script lines and file names, which
// can hold anything).
HelperResult run_helper(const std::vector<std::string>& argv);

// "exit status 1", "killed by signal 25 (File size limit exceeded)": how a
// process ended, from its wait status.
std::string how_it_ended(int wait_status);

// The command's path as execvp finds it: `program` itself when it holds a
// slash, else the first executable regular file of that name on PATH (or,
// PATH unset, in glibc's default /bin:/usr/bin: where the command is then
// run from); "" when none.
std::string resolve_on_path(const std::string& program);

}  // namespace heapline::launcher
