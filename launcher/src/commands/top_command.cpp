// heapline top: a running process's heap from its live file, refreshed until
// it ends or 'q' is pressed.
#include <poll.h>
#include <termios.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <iostream>
#include <thread>

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

  // Waits `seconds`, or less when a key comes; true when it was 'q'.
  bool wait_for_quit(double seconds) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    for (;;) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      if (!active_) {
        std::this_thread::sleep_for(left);
        return false;
      }
      pollfd in{STDIN_FILENO, POLLIN, 0};
      if (poll(&in, 1, static_cast<int>(left.count())) <= 0) continue;
      char key = 0;
      if (read(STDIN_FILENO, &key, 1) == 1 && (key == 'q' || key == 'Q')) return true;
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
    for (;;) {
      file.refresh(process_alive(pid));
      const bool alive =
          process_alive(pid) && file.region().header.state.load(std::memory_order_acquire) != heapline::kLiveExited;
      LiveSnapshot snapshot = take_snapshot(file, alive);
      if (terminal && !once) std::cout << "\033[H\033[2J";
      say_lines(std::cout, render_top(snapshot, alive));
      std::cout << std::flush;
      if (once) return 0;
      if (!alive) {
        say_lines(std::cout, "heapline top: process " + std::to_string(pid) + " has ended\n");
        return 0;
      }
      if (keys.wait_for_quit(interval)) return 0;
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
