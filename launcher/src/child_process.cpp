#include "child_process.h"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>

#include <heapline/file_kind.h>
#include <heapline/preload_check.h>
#include <heapline/regular_file.h>
#include <heapline/shared_object.h>
#include <heapline/write_signals.h>

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

// Reaps what has ended among this process's children (the processes of the
// run it adopted, and `watched`, whose wait status goes to `on_watched`).
// True while some still run.
bool reap_ended(pid_t watched = -1, const std::function<void(int)>& on_watched = {}) {
  for (;;) {
    int status = 0;
    const pid_t done = waitpid(-1, &status, WNOHANG);
    if (done > 0 && done == watched && on_watched) on_watched(status);
    if (done > 0) continue;
    if (done == 0) return true;
    if (errno == EINTR) continue;
    return false;  // ECHILD: none left
  }
}

// The launcher's: what it adopted, once the keeper is gone.
bool adopted_running() { return reap_ended(); }

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

// Whether a file the kernel refused to execute (ENOEXEC) is a script a
// shell would run with /bin/sh: text without a #! line. A file that starts
// with the ELF magic (a binary for another machine, a corrupt one) or holds
// a NUL byte in its first line is a binary, never handed to the shell.
bool is_shell_script(const char* path) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char head[1024];
  ssize_t got;
  do {
    got = ::pread(fd, head, sizeof head, 0);
  } while (got < 0 && errno == EINTR);
  ::close(fd);
  if (got < 0) return false;
  const auto size = static_cast<std::size_t>(got);
  if (size >= 4 && std::memcmp(head, "\x7f" "ELF", 4) == 0) return false;
  const void* newline = std::memchr(head, '\n', size);
  const std::size_t first_line = newline != nullptr ? static_cast<std::size_t>(static_cast<const char*>(newline) - head) : size;
  return std::memchr(head, 0, first_line) == nullptr;
}

// execv of `path`; on ENOEXEC, a shell script without #! is run by /bin/sh
// as a shell runs it, a binary is not. Returns errno when nothing ran.
int exec_file(const char* path, char* const argv[]) {
  ::execv(path, argv);
  if (errno != ENOEXEC) return errno;
  if (!is_shell_script(path)) return ENOEXEC;
  std::vector<char*> shell_argv = {const_cast<char*>("/bin/sh"), const_cast<char*>(path)};
  for (char* const* arg = argv[0] != nullptr ? argv + 1 : argv; *arg != nullptr; ++arg) shell_argv.push_back(*arg);
  shell_argv.push_back(nullptr);
  ::execv("/bin/sh", shell_argv.data());
  return ENOEXEC;
}

// Where execvp looks for a name without a slash, in its order: each
// directory of PATH ("" is the current one), or glibc's default when PATH is
// unset. The one list for running a command and for naming what will run.
std::vector<std::string> search_candidates(const std::string& program) {
  const char* path = std::getenv("PATH");
  const std::string dirs = path != nullptr ? path : "/bin:/usr/bin";  // glibc's execvp's default
  std::vector<std::string> candidates;
  std::size_t start = 0;
  while (start <= dirs.size()) {
    std::size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    candidates.push_back((end > start ? dirs.substr(start, end - start) : std::string(".")) + "/" + program);
    start = end + 1;
  }
  return candidates;
}

// Every command the launcher runs (the profiled command, a helper) is
// started here: found on PATH as execvp finds it (a name without a slash),
// and run as a shell runs it (see exec_file). Returns errno when nothing
// ran: ENOEXEC for a binary the kernel cannot execute.
int exec_command(char* const argv[]) {
  // The launcher ignores the signals of a failed write (heapline_main.cpp);
  // the command runs with the default, as it would on its own.
  heapline::default_write_signals();
  const char* program = argv[0];
  if (program == nullptr || *program == 0) return ENOENT;
  if (std::strchr(program, '/') != nullptr) return exec_file(program, argv);
  bool denied = false;
  for (const std::string& candidate : search_candidates(program)) {
    const int error = exec_file(candidate.c_str(), argv);
    if (error == EACCES) {
      denied = true;
    } else if (error != ENOENT && error != ENOTDIR && error != ESTALE && error != ENODEV && error != ETIMEDOUT) {
      return error;
    }
  }
  return denied ? EACCES : ENOENT;
}

}  // namespace

std::string resolve_on_path(const std::string& program) {
  if (program.find('/') != std::string::npos) return program;
  for (const std::string& candidate : search_candidates(program)) {
    struct stat info {};
    if (::stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) && ::access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return "";
}

namespace {

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
    case SharedObjectProblem::missing:
      return "missing";
    case SharedObjectProblem::not_regular_file: {
      struct stat info {};
      return ::stat(path.c_str(), &info) == 0 ? file_kind_name(info.st_mode) : "not a regular file";
    }
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
  if (error == ENOEXEC) return {who + "cannot execute binary file: " + std::strerror(error), 126};  // as bash says it
  if (error != ENOENT) return {who + std::strerror(error), 126};
  const std::string found = resolve_on_path(program);
  struct stat info {};
  if (found.empty() || ::stat(found.c_str(), &info) != 0) {
    return {who + (program.find('/') != std::string::npos ? "no such file" : "command not found on PATH"), 127};
  }
  // The file is there: what is missing is what it needs to start, maybe
  // further down a chain of #! lines (a script whose interpreter is a
  // script whose own interpreter, "/bin/sh\r" of a CRLF file, is missing):
  // followed as the kernel follows it, at most four deep.
  std::string chain;
  std::string current = found;
  for (int depth = 0; depth < 4; ++depth) {
    const std::string interpreter = interpreter_of(current);
    if (interpreter.empty()) break;
    chain += depth == 0 ? "its interpreter " + interpreter + " (named on its #! line)"
                        : ", whose interpreter " + interpreter;
    if (::stat(interpreter.c_str(), &info) != 0) return {who + chain + " does not exist", 127};
    current = interpreter;
  }
  if (!chain.empty()) return {who + chain + " cannot start: a file it needs is missing", 127};
  return {who + "a file it needs to start is missing (its ELF interpreter, the dynamic loader?)", 127};
}

namespace {

// What the launcher and the keeper tell each other, over a SOCK_SEQPACKET
// pair: one message per read, and the end of the other side reads as a
// message of kind 0.
struct Message {
  int kind = 0;
  int value = 0;
};
enum MessageKind : int {
  kGone = 0,  // the other side ended
  // From the keeper.
  kStarted,       // value: the command's pid, or -errno when it could not be forked
  kCommandEnded,  // value: its wait status
  kLeftRunning,   // the command left processes running: the keeper waits for them
  kTreeEnded,     // no process of the run is left
  // From the launcher.
  kForward,      // value: a stop signal for the command, while it runs
  kWaitForLeft,  // after kCommandEnded: wait for what the command left running
  kRelease,      // the launcher ends as it should: what still runs is left to run
};

void send_message(int channel, int kind, int value) {
  const Message message{kind, value};
  while (::send(channel, &message, sizeof message, MSG_NOSIGNAL) < 0 && errno == EINTR) {
  }
}

Message receive_message(int channel) {
  Message message;
  ssize_t got;
  do {
    got = ::recv(channel, &message, sizeof message, 0);
  } while (got < 0 && errno == EINTR);
  return got == static_cast<ssize_t>(sizeof message) ? message : Message{};
}

// How long the processes of a run whose launcher died have between SIGTERM
// and SIGKILL.
constexpr int kStopGraceMs = 2000;

// The processes below `ancestor`, from each /proc/PID/stat's parent ("pid
// (comm) state ppid ..."; comm may hold spaces and parentheses).
std::vector<pid_t> descendants_of(pid_t ancestor) {
  std::multimap<pid_t, pid_t> children;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return {};
  while (const dirent* entry = ::readdir(proc)) {
    char* end = nullptr;
    const long pid = std::strtol(entry->d_name, &end, 10);
    if (pid <= 0 || *end != 0) continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char text[512];
    const ssize_t got = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    if (got <= 0) continue;
    text[got] = 0;
    const char* after = std::strrchr(text, ')');
    int parent = 0;
    if (after != nullptr && std::sscanf(after + 1, " %*c %d", &parent) == 1) {
      children.emplace(static_cast<pid_t>(parent), static_cast<pid_t>(pid));
    }
  }
  ::closedir(proc);
  std::vector<pid_t> found;
  std::vector<pid_t> parents = {ancestor};
  while (!parents.empty()) {
    const pid_t parent = parents.back();
    parents.pop_back();
    const auto [first, last] = children.equal_range(parent);
    for (auto it = first; it != last; ++it) {
      found.push_back(it->second);
      parents.push_back(it->second);
    }
  }
  return found;
}

// The keeper's reaping: its children that ended (the command, and the
// processes of the run it adopted); the launcher is told when the command
// ended. True while some still run.
bool reap(pid_t command, bool& command_running, int channel) {
  return reap_ended(command, [&](int status) {
    command_running = false;
    send_message(channel, kCommandEnded, status);
  });
}

// The launcher is gone (killed, crashed): every process of the run is
// stopped. They are all the keeper's descendants, since it adopts the
// orphans of the run: each gets SIGTERM (and SIGCONT, should it be
// stopped) when first seen, and once the grace has passed SIGKILL, until
// none is left.
void stop_tree(pid_t command, bool& command_running, int channel, int child_ended) {
  std::set<pid_t> told;
  const auto killing_from = std::chrono::steady_clock::now() + std::chrono::milliseconds(kStopGraceMs);
  while (reap(command, command_running, channel)) {
    const bool late = std::chrono::steady_clock::now() >= killing_from;
    std::vector<pid_t> tree = descendants_of(getpid());
    if (tree.empty() && command_running) tree.push_back(command);  // no /proc: the command at least
    for (const pid_t pid : tree) {
      if (late) {
        kill(pid, SIGKILL);
      } else if (told.insert(pid).second) {
        kill(pid, SIGTERM);
        kill(pid, SIGCONT);
      }
    }
    pollfd ended{child_ended, POLLIN, 0};
    if (poll(&ended, 1, 20) > 0) {
      signalfd_siginfo info;
      while (read(child_ended, &info, sizeof info) == sizeof info) {
      }
    }
  }
}

// The keeper: the parent of the command, between it and the launcher. It
// adopts the run's orphans (a child subreaper), so that every process of
// the run stays below it whatever the command does (double forks, setsid);
// it reaps them, forwards the stop signals the launcher asks it to, and
// when the launcher ends without releasing it (SIGKILL, a crash: the other
// end of `channel` closes) it stops the whole tree. Runs in the launcher's
// fork; never returns.
[[noreturn]] void keep(int channel, int exec_report, std::vector<char*>& argv,
                       const std::function<void(pid_t)>& prepare_child, const sigset_t& command_mask) {
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  prctl(PR_SET_NAME, "heapline-keeper");
  // SIGCHLD and the stop signals are blocked already (the launcher's mask):
  // the terminal's signals reach the command by themselves and never end
  // the keeper.
  sigset_t child_set;
  sigemptyset(&child_set);
  sigaddset(&child_set, SIGCHLD);
  const int child_ended = signalfd(-1, &child_set, SFD_CLOEXEC | SFD_NONBLOCK);
  const pid_t command = fork();
  if (command == 0) {
    close(channel);
    if (child_ended >= 0) close(child_ended);
    sigprocmask(SIG_SETMASK, &command_mask, nullptr);
    prepare_child(getpid());
    int error = exec_command(argv.data());
    ssize_t ignored = write(exec_report, &error, sizeof error);
    (void)ignored;
    _exit(error == ENOENT ? 127 : 126);
  }
  const int fork_error = errno;
  close(exec_report);
  // The keeper holds no terminal or pipe of the launcher's open: a reader
  // of the launcher's output sees its end when the launcher ends.
  const int null = open("/dev/null", O_RDWR | O_CLOEXEC);
  for (int fd = 0; fd <= 2; ++fd) {
    if (null >= 0) {
      dup2(null, fd);
    } else {
      close(fd);
    }
  }
  if (null > 2) close(null);
  send_message(channel, kStarted, command > 0 ? command : -fork_error);
  if (command < 0) _exit(0);
  bool command_running = true;
  bool waiting_for_left = false;
  for (;;) {
    pollfd fds[2] = {{channel, POLLIN, 0}, {child_ended, POLLIN, 0}};
    if (poll(fds, child_ended >= 0 ? 2 : 1, child_ended >= 0 ? -1 : 50) < 0) continue;
    if (child_ended >= 0 && (fds[1].revents & POLLIN) != 0) {
      signalfd_siginfo info;
      while (read(child_ended, &info, sizeof info) == sizeof info) {
      }
    }
    const bool running = reap(command, command_running, channel);
    if (waiting_for_left && !running) {
      send_message(channel, kTreeEnded, 0);
      waiting_for_left = false;
    }
    if ((fds[0].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
    const Message message = receive_message(channel);
    switch (message.kind) {
      case kGone:
        stop_tree(command, command_running, channel, child_ended);
        _exit(0);
      case kForward:
        if (command_running) kill(command, message.value);
        break;
      case kWaitForLeft:
        waiting_for_left = reap(command, command_running, channel);
        send_message(channel, waiting_for_left ? kLeftRunning : kTreeEnded, 0);
        break;
      case kRelease:
        _exit(0);
      default:
        break;
    }
  }
}

// The stop signals that came while the launcher waited: `stopping` set, and
// each forwarded to the command unless the terminal sent it (SI_KERNEL: the
// command's process group had it already). False when none came.
template <typename Forward>
bool take_stop_signals(int signals, Forward forward) {
  bool stop = false;
  signalfd_siginfo info;
  while (read(signals, &info, sizeof info) == sizeof info) {
    if (info.ssi_signo == SIGCHLD) continue;
    stop = true;
    if (info.ssi_code != SI_KERNEL) forward(static_cast<int>(info.ssi_signo));
  }
  return stop;
}

}  // namespace

ChildResult run_command(const std::vector<std::string>& command, const std::function<void(pid_t)>& prepare_child,
                        const WaitWatch& watch) {
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  // The command reports an exec failure through this close-on-exec pipe:
  // nothing arrives when exec succeeded. The keeper and the launcher talk
  // over `channel`.
  int report[2];
  int channel[2];
  if (pipe2(report, O_CLOEXEC) != 0) {
    say("heapline", std::string("cannot make a pipe: ") + std::strerror(errno));
    return {125, false, -1, -1, {}};
  }
  if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, channel) != 0) {
    say("heapline", std::string("cannot make a socket pair: ") + std::strerror(errno));
    close(report[0]);
    close(report[1]);
    return {125, false, -1, -1, {}};
  }
  // The signals arrive through a signalfd while the command runs: blocked
  // from before the fork, so none is lost in between.
  sigset_t handled, old_mask;
  sigemptyset(&handled);
  sigaddset(&handled, SIGCHLD);
  for (int signal_number : kStopSignals) sigaddset(&handled, signal_number);
  sigprocmask(SIG_BLOCK, &handled, &old_mask);
  const int signals = signalfd(-1, &handled, SFD_CLOEXEC | SFD_NONBLOCK);
  // Should the keeper die, the run's processes are adopted by the launcher
  // rather than by init, and it follows the command itself. A kernel that
  // refuses it (before 3.4, or qemu-user) refuses the keeper too: what the
  // command leaves running goes to init, out of the run's reach, which one
  // line says (the keeper says nothing more).
  if (prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    say("heapline", std::string("cannot keep the command's processes as its tree (PR_SET_CHILD_SUBREAPER: ") +
                        std::strerror(errno) +
                        "): one whose parent ends before it is neither waited for nor summarised");
  }

  const pid_t keeper = fork();
  if (keeper < 0) {
    say("heapline", std::string("cannot start the command (fork): ") + std::strerror(errno));
    for (int fd : {report[0], report[1], channel[0], channel[1], signals}) {
      if (fd >= 0) close(fd);
    }
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    return {125, false, -1, -1, {}};
  }
  if (keeper == 0) {
    close(channel[0]);
    close(report[0]);
    if (signals >= 0) close(signals);
    if (watch.fd >= 0) close(watch.fd);
    keep(channel[1], report[1], argv, prepare_child, old_mask);
  }
  close(channel[1]);
  close(report[1]);
  const int to_keeper = channel[0];
  const Message started = receive_message(to_keeper);
  const pid_t pid = started.kind == kStarted ? started.value : 0;
  if (started.kind != kStarted) {
    say("heapline", "the keeper of the run (pid " + std::to_string(keeper) + ") ended before it started the command");
  } else if (pid < 0) {
    say("heapline", std::string("cannot start the command: fork: ") + std::strerror(-pid));
  }
  if (pid > 0 && watch.on_started) watch.on_started(pid);
  int exec_error = 0;
  ssize_t got;
  do {
    got = read(report[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  close(report[0]);

  // The command's end comes from the keeper; should the keeper end first
  // (killed), the command is the launcher's own child from then on.
  bool through_keeper = pid > 0;
  auto keeper_gone = [&] {
    through_keeper = false;
    int status = 0;
    while (waitpid(keeper, &status, 0) < 0 && errno == EINTR) {
    }
    say("heapline", "the keeper of the run (pid " + std::to_string(keeper) +
                        ") ended before the command: the launcher follows the command itself");
  };
  auto forward = [&](int signal_number) {
    if (through_keeper) {
      send_message(to_keeper, kForward, signal_number);
    } else {
      kill(pid, signal_number);
    }
  };
  int wait_status = 0;
  bool stopping = false;  // a stop signal came: the run is not waited for beyond the command
  while (pid > 0) {
    if (!through_keeper) {
      const pid_t done = waitpid(pid, &wait_status, WNOHANG);
      if (done == pid || (done < 0 && errno != EINTR)) break;
    }
    pollfd fds[3] = {{signals, POLLIN, 0}, {through_keeper ? to_keeper : -1, POLLIN, 0}, {watch.fd, POLLIN, 0}};
    if (poll(fds, 3, -1) < 0) continue;
    if (watch.fd >= 0 && (fds[2].revents & POLLIN) != 0) watch.on_ready();
    if (signals >= 0 && (fds[0].revents & POLLIN) != 0) stopping |= take_stop_signals(signals, forward);
    if (through_keeper && (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
      const Message message = receive_message(to_keeper);
      if (message.kind == kCommandEnded) {
        wait_status = message.value;
        break;
      }
      if (message.kind == kGone) keeper_gone();
    }
  }
  // The run is the whole tree: what the command left running is waited for
  // (and its reports read as they land), unless a stop signal came.
  if (pid > 0 && got != sizeof exec_error && !stopping && watch.on_waiting_for_adopted) {
    if (through_keeper) {
      send_message(to_keeper, kWaitForLeft, 0);
      for (bool waiting = true; waiting;) {
        pollfd fds[3] = {{signals, POLLIN, 0}, {to_keeper, POLLIN, 0}, {watch.fd, POLLIN, 0}};
        if (poll(fds, 3, -1) < 0) continue;
        if (watch.fd >= 0 && (fds[2].revents & POLLIN) != 0) watch.on_ready();
        if (signals >= 0 && (fds[0].revents & POLLIN) != 0 && take_stop_signals(signals, [](int) {})) break;
        if ((fds[1].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
        const Message message = receive_message(to_keeper);
        if (message.kind == kLeftRunning) watch.on_waiting_for_adopted();
        waiting = message.kind == kLeftRunning;
      }
    } else {
      wait_for_adopted(signals, watch);
    }
  }
  // Released: what still runs (a stop signal came, or --follow command) is
  // left to run, now the launcher's.
  send_message(to_keeper, kRelease, 0);
  close(to_keeper);
  if (through_keeper || pid <= 0) {
    int status = 0;
    while (waitpid(keeper, &status, 0) < 0 && errno == EINTR) {
    }
  }
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
  if (pid <= 0) return {125, false, -1, keeper, {}};
  if (got == sizeof exec_error) {
    const ExecFailure failure = describe_exec_failure(command[0], exec_error);
    say("heapline", failure.message);
    return {failure.status, false, pid, keeper, {}};
  }
  return {status_of(wait_status), true, pid, keeper, children_running()};
}

HelperResult run_helper(const std::vector<std::string>& command) {
  HelperResult result;
  result.wait_status = 127 << 8;  // as a process that could not be started ends
  std::vector<std::string> storage = command;
  std::vector<char*> argv = to_argv(storage);
  int said[2];
  if (::pipe2(said, O_CLOEXEC) != 0) return result;
  pid_t pid = fork();
  if (pid < 0) {
    ::close(said[0]);
    ::close(said[1]);
    return result;
  }
  if (pid == 0) {
    // The helper writes nothing of interest on stdout; keep the command's
    // stdout clean of it.
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0) dup2(null, STDOUT_FILENO);
    dup2(said[1], STDERR_FILENO);
    exec_command(argv.data());
    _exit(127);
  }
  ::close(said[1]);
  // Read to the end whatever its length (a full pipe would stop the
  // helper); the first kHelperSaidBytes are kept.
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(said[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    const std::size_t room = kHelperSaidBytes - std::min(kHelperSaidBytes, result.said.size());
    result.said.append(buffer, std::min(room, static_cast<std::size_t>(n)));
  }
  ::close(said[0]);
  result.wait_status = wait_for(pid);
  return result;
}

std::string how_it_ended(int wait_status) {
  if (WIFEXITED(wait_status)) return "exit status " + std::to_string(WEXITSTATUS(wait_status));
  if (WIFSIGNALED(wait_status)) {
    const int signal_number = WTERMSIG(wait_status);
    const char* name = ::strsignal(signal_number);
    return "killed by signal " + std::to_string(signal_number) + (name != nullptr ? " (" + std::string(name) + ")" : "");
  }
  return "wait status " + std::to_string(wait_status);
}

}  // namespace heapline::launcher
