// heapline top: a running process's heap from its live file, refreshed until
// it ends or 'q' is pressed.
#include <poll.h>
#include <sys/syscall.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <algorithm>

#include <heapline/option_checks.h>

#include "commands/subcommand.h"
#include "live_view.h"

namespace heapline::launcher {

namespace {

// 'q' on the terminal quits `heapline top`: stdin is read key by key (no
// echo) while top runs, and its mode restored however top ends, on return
// or on a signal.
class QuitKey {
 public:
  explicit QuitKey(bool wanted) {
    if (!wanted || isatty(STDIN_FILENO) == 0 || tcgetattr(STDIN_FILENO, &saved_mode()) != 0) return;
    termios keys = saved_mode();
    keys.c_lflag &= ~static_cast<tcflag_t>(ICANON | ECHO);
    keys.c_cc[VMIN] = 0;
    keys.c_cc[VTIME] = 0;
    for (int signal_number : {SIGINT, SIGTERM, SIGHUP}) std::signal(signal_number, restore_and_die);
    active_ = tcsetattr(STDIN_FILENO, TCSANOW, &keys) == 0;
  }
  ~QuitKey() {
    if (active_) tcsetattr(STDIN_FILENO, TCSANOW, &saved_mode());
  }
  QuitKey(const QuitKey&) = delete;
  QuitKey& operator=(const QuitKey&) = delete;

  // Why a wait ended.
  enum class Wake { kRefresh, kQuit, kEnded };

  // Waits `seconds`, or less when a key comes ('q': kQuit) or process `pid`
  // ends (kEnded). The end is seen at once through `process_fd` (a pidfd,
  // readable once the process has exited, a zombie not yet reaped
  // included), else looked for each second: a long refresh interval is
  // never a wait for a process that has ended.
  Wake wait(double seconds, pid_t pid, int process_fd) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return Wake::kRefresh;
      pollfd watched[2];
      nfds_t count = 0;
      if (process_fd >= 0) watched[count++] = {process_fd, POLLIN, 0};
      if (active_) watched[count++] = {STDIN_FILENO, POLLIN, 0};
      const int timeout_ms = static_cast<int>(process_fd >= 0 ? left.count() : std::min<long long>(left.count(), 1000));
      const int ready = poll(watched, count, timeout_ms);
      if (process_fd < 0 && !process_alive(pid)) return Wake::kEnded;
      if (ready <= 0) continue;
      for (nfds_t i = 0; i < count; ++i) {
        if (watched[i].revents == 0) continue;
        if (watched[i].fd == process_fd) return Wake::kEnded;
        char key = 0;
        if (read(STDIN_FILENO, &key, 1) == 1 && (key == 'q' || key == 'Q')) return Wake::kQuit;
      }
    }
  }

 private:
  static termios& saved_mode() {
    static termios mode{};
    return mode;
  }
  static void restore_and_die(int signal_number) {
    tcsetattr(STDIN_FILENO, TCSANOW, &saved_mode());
    std::signal(signal_number, SIG_DFL);
    std::raise(signal_number);
  }
  bool active_ = false;
};

// A pidfd of process `pid` (pidfd_open, Linux 5.3), readable once the
// process is gone; fd() is -1 where the kernel has none, or for pid 0.
class ProcessDescriptor {
 public:
  explicit ProcessDescriptor(pid_t pid) {
#ifdef SYS_pidfd_open
    if (pid > 0) fd_ = static_cast<int>(syscall(SYS_pidfd_open, pid, 0));
#endif
  }
  ~ProcessDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  ProcessDescriptor(const ProcessDescriptor&) = delete;
  ProcessDescriptor& operator=(const ProcessDescriptor&) = delete;
  int fd() const { return fd_; }

 private:
  int fd_ = -1;
};

// The refresh interval's default and limits, as the help says them.
constexpr double kDefaultInterval = 1.0;
constexpr double kShortestInterval = 0.05;
constexpr double kLongestInterval = 3600;
// The largest pid Linux gives (PID_MAX_LIMIT, 2^22).
constexpr long long kLargestPid = 4'194'304;

struct TopOptions {
  pid_t pid = 0;
  bool once = false;
  double interval = kDefaultInterval;
};

int top(const TopOptions& options) {
  const pid_t pid = options.pid;
  const bool once = options.once;
  const double interval = options.interval;
  std::string why;
  auto path = find_live_file(pid, why);
  if (!path) {
    say("heapline top", why);
    return 1;
  }
  try {
    // Read through the descriptor opened here, which stays valid after the
    // process removes the file at exit: the last screen shows its final
    // figures. A copy each time, never a mapping: a file cut meanwhile by
    // another process ends top with a line, not a SIGBUS.
    LiveFile file(*path, LiveFile::CutFile::kReadAsFarAsItGoes);
    const bool terminal = isatty(STDOUT_FILENO) != 0;
    QuitKey keys(!once);
    const ProcessDescriptor process(once ? 0 : pid);
    bool ended = false;  // seen through the pidfd: a zombie, which kill(pid, 0) still finds, has ended
    for (;;) {
      file.refresh(!ended && process_alive(pid));
      const bool alive = !ended && process_alive(pid) &&
                         file.region().header.state.load(std::memory_order_acquire) != heapline::kLiveExited;
      LiveSnapshot snapshot = take_snapshot(file, alive);
      if (terminal && !once) std::cout << "\033[H\033[2J";
      say_lines(std::cout, render_top(snapshot, alive));
      std::cout << std::flush;
      if (once) return 0;
      if (!alive) {
        say_lines(std::cout, "heapline top: process " + std::to_string(pid) + " has ended\n");
        return 0;
      }
      const QuitKey::Wake wake = keys.wait(interval, pid, process.fd());
      if (wake == QuitKey::Wake::kQuit) return 0;
      ended = wake == QuitKey::Wake::kEnded;
    }
  } catch (const std::exception& error) {
    say("heapline top", error.what());
    return 1;
  }
}

}  // namespace

Subcommand add_top_command(CLI::App& heapline) {
  CLI::App* app =
      heapline.add_subcommand("top", "live bytes, peak, markers and a chart of a process run under heapline");
  auto options = std::make_shared<TopOptions>();
  app->add_option("PID", options->pid, "the process")
      ->required()
      ->transform(heapline::option_checks::whole_number(1, kLargestPid));
  app->add_flag("--once", options->once, "print one snapshot and exit");
  app->add_option("--interval", options->interval,
                  "seconds between refreshes (default " + CLI::detail::to_string(kDefaultInterval) + ")")
      ->check(heapline::option_checks::number(kShortestInterval, kLongestInterval));
  return {app, [options] { return top(*options); }};
}

}  // namespace heapline::launcher
