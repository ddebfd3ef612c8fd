// _exit and _Exit: a process that ends through them skips the library's
// destructor, so without these it would leave no report and its live file
// behind (a shell's `$(...)` subshells and python's forked workers end this
// way). They write the report exactly as exit() does, then end the process
// through the next definition. glibc's own calls (exit() ending in _exit,
// posix_spawn's child) bind internally and never come here; nor does any
// allocation call, so the hot path is untouched.
#include <dlfcn.h>

#include "intercepted.h"
#include "os.h"
#include "process.h"
#include "slow_paths.h"

namespace {

using ExitFunction = void (*)(int);

// Resolved at load time: a vfork child calling _exit must not run dlsym
// (it may allocate, in its parent's memory).
ExitFunction g_next_exit = nullptr;
ExitFunction g_next_exit_upper = nullptr;

__attribute__((constructor)) void resolve_next_exits() {
  g_next_exit = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "_exit"));
  g_next_exit_upper = reinterpret_cast<ExitFunction>(dlsym(RTLD_NEXT, "_Exit"));
}

[[noreturn]] void end_process(ExitFunction next, int status) {
  heapline::accounting::write_report_at_early_exit();
  if (next != nullptr) next(status);
  heapline::os::exit_process(status);  // before the constructor ran: what glibc's _exit does
}

}  // namespace

HEAPLINE_EXPORT(_exit) void _exit(int status) { end_process(g_next_exit, status); }

HEAPLINE_EXPORT(_Exit) void _Exit(int status) { end_process(g_next_exit_upper, status); }
