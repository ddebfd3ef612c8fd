#include "heapline_bench/measurement/process_runner.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <heapline/library_settings.h>
#include <heapline/say.h>
#include <heapline/terminal_text.h>
#include <heapline/write_signals.h>

extern char** environ;

namespace heapline::bench {

void set_preload(std::map<std::string, std::string>& env, std::initializer_list<std::string> libraries) {
  std::string preload;
  for (const std::string& library : libraries)
    if (!library.empty()) preload += (preload.empty() ? "" : ":") + library;
  env["LD_PRELOAD"] = preload;
}

std::string set_by_the_harness(const std::string& name) {
  if (name == "LD_PRELOAD") return "the measurement preloads the library it measures";
  if (name == "HEAPLINE_OUT") return "the measurement sends the library's report where it reads it, or nowhere";
  if (name == "LD_DEBUG" || name == "LD_DEBUG_OUTPUT")
    return "the measurement traces what the loader loads, to see the library loaded";
  return "";
}

std::string refused_by_the_library(const std::string& name, const std::string& value) {
  if (heapline::read_setting_alone(name.c_str(), value.c_str()) != 0) return "";
  return name + " takes " + heapline::setting_rule(name.c_str()) + ", not '" + heapline::terminal_text(value, 80) +
         "' (the library would run with its default)";
}

std::string how_it_ended(const RunResult& result) {
  if (!result.started) return "could not be started (" + result.start_error + ")";
  if (result.signal != 0)
    return "was killed by signal " + std::to_string(result.signal) + " (" + strsignal(result.signal) + ")";
  return "exited with status " + std::to_string(result.exit_status);
}

std::string how_it_ended_and_said(const RunResult& result) {
  // Its words under ours, indented (heapline/say.h): a line of gnuplot's
  // reading "heapline-bench: ..." passed for the program's own.
  return how_it_ended(result) + (result.stderr_tail.empty() ? "" : ":\n" + heapline::indented(result.stderr_tail));
}

namespace {

constexpr std::size_t kStderrTail = 4096;
volatile std::sig_atomic_t g_interrupt_signal = 0;

void note_interrupt(int signal) { g_interrupt_signal = signal; }

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) / 1e6; }

double monotonic_now() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

std::vector<std::string> child_environment(const RunSpec& spec) {
  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    auto equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  if (spec.settings_from_env_only) {
    std::string left_out;
    for (const char* setting : heapline::kLibrarySettings) {
      if (env.erase(setting) > 0) left_out += (left_out.empty() ? "" : ", ") + std::string(setting);
    }
    static bool said = false;
    if (!left_out.empty() && !said) {
      said = true;
      heapline::say(std::cerr, "heapline-bench",
                    "note: " + left_out + " in the environment " +
                        (left_out.find(',') == std::string::npos ? "is" : "are") +
                        " not passed to the measured commands: a point is measured with the library's defaults (a "
                        "catalogue's env or compare --env sets a setting)");
    }
  }
  for (const auto& [name, value] : spec.env) env[name] = value;
  if (!spec.ld_debug_output.empty()) {
    env["LD_DEBUG"] = "files";
    env["LD_DEBUG_OUTPUT"] = spec.ld_debug_output;
  }
  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

std::string read_head(int fd, std::size_t bytes = 1024) {
  std::string head(bytes, '\0');
  ssize_t got = pread(fd, head.data(), head.size(), 0);
  head.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return head;
}

std::string read_tail(int fd) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || st.st_size == 0) return {};
  off_t start = st.st_size > static_cast<off_t>(kStderrTail) ? st.st_size - static_cast<off_t>(kStderrTail) : 0;
  std::string tail(static_cast<std::size_t>(st.st_size - start), '\0');
  ssize_t got = pread(fd, tail.data(), tail.size(), start);
  tail.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
  return tail;
}

// A temporary file that no other process can open: created O_EXCL by
// mkstemp and unlinked at once.
int anonymous_temporary_file() {
  char path[] = "/tmp/heapline-bench-output-XXXXXX";
  const int fd = mkostemp(path, O_CLOEXEC);
  if (fd < 0) throw std::runtime_error(std::string("cannot create a temporary file in /tmp: ") + std::strerror(errno));
  unlink(path);
  return fd;
}

// Blocks the interrupting signals for the life of one run, so that one
// arriving between the spawn and the wait cannot be missed: the wait unblocks
// them atomically (ppoll), the way pselect was made for.
class BlockedInterrupts {
 public:
  BlockedInterrupts() {
    sigset_t interrupts;
    sigemptyset(&interrupts);
    for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&interrupts, signal);
    pthread_sigmask(SIG_BLOCK, &interrupts, &previous_);
  }
  ~BlockedInterrupts() { pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }
  const sigset_t& previous() const { return previous_; }

 private:
  sigset_t previous_;
};

// Kills the child's process group and reaps the child, then reports why.
[[noreturn]] void abandon(pid_t child) {
  kill(-child, SIGKILL);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  throw Interrupted{static_cast<int>(g_interrupt_signal)};
}

}  // namespace

PosixProcessRunner::PosixProcessRunner() {
  struct sigaction action {};
  action.sa_handler = note_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = 0;  // no SA_RESTART: wait4 must return EINTR
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaction(signal, &action, nullptr);
}

PosixProcessRunner::~PosixProcessRunner() {
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal, SIG_DFL);
}

RunResult PosixProcessRunner::run(const RunSpec& spec) {
  if (g_interrupt_signal != 0) throw Interrupted{static_cast<int>(g_interrupt_signal)};
  RunResult result;
  if (spec.argv.empty()) throw std::invalid_argument("empty command");
  BlockedInterrupts blocked;
  if (g_interrupt_signal != 0) throw Interrupted{static_cast<int>(g_interrupt_signal)};

  struct Outputs {
    int err = -1, out = -1;
    ~Outputs() {
      if (err >= 0) close(err);
      if (out >= 0) close(out);
    }
  } outputs;
  outputs.err = anonymous_temporary_file();
  if (spec.capture_stdout) outputs.out = anonymous_temporary_file();
  const int stderr_fd = outputs.err, stdout_fd = outputs.out;

  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (stdout_fd >= 0) posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  else posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, stderr_fd, STDERR_FILENO);
  if (!spec.working_directory.empty())
    posix_spawn_file_actions_addchdir_np(&actions, spec.working_directory.c_str());

  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t default_signals;
  sigemptyset(&default_signals);
  // SIGPIPE and SIGXFSZ: heapline-bench ignores them (main.cpp); the
  // commands it runs get the default back, as they would run on their own.
  for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&default_signals, signal);
  add_write_signals(default_signals);
  posix_spawnattr_setsigdefault(&attributes, &default_signals);
  posix_spawnattr_setpgroup(&attributes, 0);  // its own group: killed as one
  posix_spawnattr_setsigmask(&attributes, &blocked.previous());
  posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);

  std::vector<std::string> argv_strings = spec.argv;
  std::vector<std::string> env_strings = child_environment(spec);
  auto argv = pointers(argv_strings);
  auto envp = pointers(env_strings);

  pid_t child = 0;
  const double started_at = monotonic_now();
  int error = posix_spawnp(&child, argv[0], &actions, &attributes, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (error != 0) {
    result.start_error = std::strerror(error);
    return result;
  }

  // Wait for the exit with interrupts unblocked only inside ppoll on a pidfd.
  // Then wait without reaping: while the child is a zombie its pid, and so its
  // process group id, cannot be reused, so killing what it left in its group
  // (daemonised children) cannot hit anyone else.
  const int pidfd = static_cast<int>(syscall(SYS_pidfd_open, child, 0));
  for (;;) {
    if (pidfd >= 0) {
      pollfd exited{pidfd, POLLIN, 0};
      if (ppoll(&exited, 1, nullptr, &blocked.previous()) > 0) break;
    } else {
      // No pidfd (Linux < 5.3): a signal that lands just before waitid is
      // only seen once the command ends.
      pthread_sigmask(SIG_SETMASK, &blocked.previous(), nullptr);
      siginfo_t info{};
      const bool exited = waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT) == 0;
      sigset_t interrupts;
      sigemptyset(&interrupts);
      for (int signal : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&interrupts, signal);
      pthread_sigmask(SIG_BLOCK, &interrupts, nullptr);
      if (exited) break;
    }
    if (errno != EINTR) {
      if (pidfd >= 0) close(pidfd);
      throw std::runtime_error(std::string("waiting for the command failed: ") + std::strerror(errno));
    }
    if (g_interrupt_signal != 0) {
      if (pidfd >= 0) close(pidfd);
      abandon(child);
    }
  }
  const double ended_at = monotonic_now();
  if (pidfd >= 0) close(pidfd);
  kill(-child, SIGKILL);
  int status = 0;
  rusage usage{};
  while (wait4(child, &status, 0, &usage) < 0 && errno == EINTR) {
  }

  result.started = true;
  result.pid = child;
  result.wall_seconds = ended_at - started_at;
  result.user_seconds = seconds(usage.ru_utime);
  result.system_seconds = seconds(usage.ru_stime);
  result.max_rss_kib = usage.ru_maxrss;
  if (WIFEXITED(status)) result.exit_status = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.stderr_head = read_head(stderr_fd);
  result.stderr_tail = read_tail(stderr_fd);
  if (stdout_fd >= 0) result.stdout_head = read_head(stdout_fd, kStdoutHead);
  if (g_interrupt_signal != 0) throw Interrupted{static_cast<int>(g_interrupt_signal)};
  return result;
}

}  // namespace heapline::bench
