#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>

#include <heapline/preload_check.h>
#include <heapline/regular_file.h>
#include <heapline/shared_object.h>

#include "say.h"

namespace heapline::launcher {

namespace {

// The signals the launcher handles while the command runs (SIGCHLD: it
// ended).
constexpr int kStopSignals[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

std::vector<char*> to_argv(std::vector<std::string>& storage) {
  std::vector<char*> argv;
  for (auto& arg : storage) argv.push_back(arg.data());
  argv.push_back(nullptr);
  return argv;
}

// Reaps what has ended among the launcher's other children (the processes
// of the run it adopted). True while some of them still run.
bool adopted_running() {
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(-1, &status, WNOHANG);
    if (done > 0) continue;
    if (done == 0) return true;
    if (errno == EINTR) continue;
    return false;  // ECHILD: none left
  }
}

// Waits until the processes the command left running (adopted by the
// launcher, PR_SET_CHILD_SUBREAPER) have all ended, serving the watch
// meanwhile: the run is the whole tree, and their reports land when they
// end. A stop signal ends the wait at once: those still running are left to
// run, and the summary says so.
void wait_for_adopted(int signals, const WaitWatch& watch) {
  if (!watch.on_waiting_for_adopted || signals < 0 || !adopted_running()) return;
  watch.on_waiting_for_adopted();
  while (adopted_running()) {
    pollfd fds[2] = {{signals, POLLIN, 0}, {watch.fd, POLLIN, 0}};
    if (poll(fds, watch.fd >= 0 ? 2 : 1, -1) < 0) continue;
    if (watch.fd >= 0 && (fds[1].revents & POLLIN) != 0) watch.on_ready();
    signalfd_siginfo info;
    while (read(signals, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo != SIGCHLD) return;
    }
  }
}

// The launcher's own children still running: the processes of the run it
// adopted (after the command, which was waited for). Read from
// /proc/self/task/TID/children (one thread: the launcher's).
std::vector<pid_t> children_running() {
  std::string error;
  std::istringstream listing(
      RegularFile::open("/proc/self/task/" + std::to_string(getpid()) + "/children").read_all(1u << 20, error));
  std::vector<pid_t> children;
  for (pid_t child; listing >> child;) children.push_back(child);
  return children;
}

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 1;
}

int wait_for(pid_t pid) {
  int wait_status = 0;
  while (waitpid(pid, &wait_status, 0) < 0) {
    if (errno != EINTR) return 1;
  }
  return wait_status;
}

// The command's path as execvp finds it: `program` itself when it holds a
// slash, else the first executable regular file of that name on PATH.
std::string resolve_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    std::string candidate = end > start ? dirs.substr(start, end - start) : std::string(".");  // "": the current one
    candidate += '/';
    candidate += program;
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    start = end + 1;
  }
  return "";
}

// The interpreter a script names on its #! line ("" when none).
std::string interpreter_of(const std::string& path) {
  const RegularFile file = RegularFile::open(path);
  if (!file.ok()) return "";
  char head[256] = {};
  const ssize_t got = ::pread(file.fd(), head, sizeof head - 1, 0);
  if (got < 2 || head[0] != '#' || head[1] != '!') return "";
  std::string line(head + 2, static_cast<std::size_t>(got - 2));
  line = line.substr(0, line.find('\n'));
  const std::size_t first = line.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  line = line.substr(first);
  return line.substr(0, line.find_first_of(" \t"));
}

}  // namespace

std::string why_preload_cannot_apply(const std::string& program) {
  const std::string path = resolve_on_path(program);
  if (path.empty()) return "";
  char decided_by[PATH_MAX];
  const PreloadBlocker blocker = preload_blocker_of(path.c_str(), decided_by, sizeof decided_by);
  if (blocker == PreloadBlocker::none || blocker == PreloadBlocker::missing) return "";  // missing: the exec says so
  return (decided_by == path ? path : path + " (its interpreter " + decided_by + ")") + ": " +
         preload_blocker_text(blocker);
}

std::string shared_object_problem(const std::string& path) {
  switch (shared_object_problem_of(path)) {
    case SharedObjectProblem::none:
      return "";
    case SharedObjectProblem::other_machine:
      return "a 64-bit ELF file for another machine";
    case SharedObjectProblem::not_shared_object:
      return "an ELF file but not a shared library";
    default:
      return "not a 64-bit ELF file";
  }
}

ExecFailure describe_exec_failure(const std::string& program, int error) {
  const std::string who = "cannot run " + program + ": ";
  if (error != ENOENT) return {who + std::strerror(error), 126};
  const std::string found = resolve_on_path(program);
  struct stat info {};
  if (found.empty() || ::stat(found.c_str(), &info) != 0) {
    return {who + (program.find('/') != std::string::npos ? "no such file" : "command not found on PATH"), 127};
  }
  // The file is there: what is missing is what it needs to start.
  if (const std::string interpreter = interpreter_of(found); !interpreter.empty()) {
    return {who + "its interpreter " + interpreter + " (named on its #! line) does not exist", 127};
  }
  return {who + "a file it needs to start is missing (its ELF interpreter, the dynamic loader?)", 127};
}

ChildResult run_command(const std::vector<std::string>& command, const std::function<void(pid_t)>& prepare_child,
                        const WaitWatch& watch) {
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  // The child reports an exec failure through this close-on-exec pipe:
  // nothing arrives when exec succeeded.
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    std::perror("heapline: pipe");
    return {125, false, -1, {}};
  }
  // The signals arrive through a signalfd while the command runs: blocked
  // from before the fork, so none is lost in between.
  sigset_t handled, old_mask;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (int signal_number : kStopSignals) sigaddset(&handled, signal_number);
  sigprocmask(SIG_BLOCK, &handled, &old_mask);
  const int signals = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  const pid_t launcher = getpid();
  // Processes of the run whose parent ends before them are adopted by the
  // launcher rather than by init: they stay of the run (process_tree.h).
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  pid_t pid = fork();
  if (pid < 0) {
    std::perror("heapline: fork");
    if (signals >= 0) close(signals);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return {125, false, -1, {}};
  }
  if (pid == 0) {
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    close(report[0]);
    // The launcher gone (SIGKILL), the command is told to stop rather than
    // run on orphaned.
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != launcher) _exit(128 + SIGTERM);
    prepare_child(getpid());
    execvp(argv[0], argv.data());
    int error = errno;
    ssize_t ignored = write(report[1], &error, sizeof error);
    (void)ignored;
    _exit(error == ENOENT ? 127 : 126);
  }
  close(report[1]);
  if (watch.on_started) watch.on_started(pid);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(report[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close(report[0]);

  int wait_status = 0;
  bool stopping = false;  // a stop signal came: the run is not waited for beyond the command
  for (;;) {
    const pid_t done = waitpid(pid, &wait_status, WNOHANG);
    if (done == pid || (done < 0 && errno != EINTR)) break;
    if (signals < 0) {  // no signalfd: wait plainly
      wait_status = wait_for(pid);
      break;
    }
    pollfd fds[2] = {{signals, POLLIN, 0}, {watch.fd, POLLIN, 0}};
    if (poll(fds, watch.fd >= 0 ? 2 : 1, -1) < 0) continue;
    if (watch.fd >= 0 && (fds[1].revents & POLLIN) != 0) watch.on_ready();
    signalfd_siginfo info;
    while (read(signals, &info, sizeof info) == sizeof info) {
      if (info.ssi_signo == SIGCHLD) continue;
      stopping = true;
      // From the terminal (SI_KERNEL) the command's group had it already.
      if (info.ssi_code != SI_KERNEL) kill(pid, static_cast<int>(info.ssi_signo));
    }
  }
  if (got != sizeof exec_error && !stopping) wait_for_adopted(signals, watch);
  if (watch.fd >= 0) watch.on_ready();
  if (signals >= 0) close(signals);
  // Signals still pending (sent to the launcher while it waited) were meant
  // for the command: drop them rather than die of them now.
  sigset_t pending;
  sigpending(&pending);
  struct sigaction ignore {}, old_action[std::size(kStopSignals)];
  ignore.sa_handler = SIG_IGN;
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    if (sigismember(&pending, kStopSignals[i])) sigaction(kStopSignals[i], &ignore, &old_action[i]);
  }
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  for (std::size_t i = 0; i < std::size(kStopSignals); ++i) {
    if (sigismember(&pending, kStopSignals[i])) sigaction(kStopSignals[i], &old_action[i], nullptr);
  }
  if (got == sizeof exec_error) {
    const ExecFailure failure = describe_exec_failure(command[0], exec_error);
    say("heapline", failure.message);
    return {failure.status, false, pid, {}};
  }
  return {status_of(wait_status), true, pid, children_running()};
}

int run_helper(const std::vector<std::string>& command) {
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  pid_t pid = fork();
  if (pid < 0) return 127;
  if (pid == 0) {
    // The helper writes nothing of interest on stdout; keep the command's
    // stdout clean of it.
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  return status_of(wait_for(pid));
}

}  // namespace heapline::launcher
