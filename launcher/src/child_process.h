// Running the command: fork, set up the environment in the child, exec, and
// wait. The launcher ignores SIGINT and SIGQUIT while it waits (the terminal
// sends them to the command too) so it can still print the summary.
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
};

// prepare_child runs in the child after fork and before exec, with the pid
// of the child; it sets the environment.
ChildResult run_command(const std::vector<std::string>& argv, const std::function<void(pid_t)>& prepare_child);

// Runs a helper (gnuplot) and waits; returns its exit status, 127 when it
// could not be started.
int run_helper(const std::vector<std::string>& argv);

}  // namespace heapline::launcher
