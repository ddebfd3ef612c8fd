// The signals a failed write raises: SIGPIPE (a pipe or socket whose reader
// has gone) and SIGXFSZ (a write past the file size limit, ulimit -f).
// heapline's programs ignore both, so that a failed write is an error they
// see (EPIPE, EFBIG) and say, never their end: the launcher killed by a log
// pipe whose reader restarted would take its command's whole tree with it
// (its keeper stops the tree when the launcher dies) and lose the command's
// exit status, and heapline-bench would lose a measurement. A command they
// start gets the default back before it runs, as it would run on its own:
// an ignored signal stays ignored across exec.
#pragma once

#include <signal.h>

namespace heapline {

inline constexpr int kWriteSignals[] = {SIGPIPE, SIGXFSZ};

// In main, before anything is written.
inline void ignore_write_signals() {
  for (int signal_number : kWriteSignals) ::signal(signal_number, SIG_IGN);
}

// In a child between fork and exec (async-signal-safe: sigaction alone).
inline void default_write_signals() {
  struct sigaction default_action {};
  default_action.sa_handler = SIG_DFL;
  for (int signal_number : kWriteSignals) ::sigaction(signal_number, &default_action, nullptr);
}

// The same for a child started by posix_spawn: added to the set
// POSIX_SPAWN_SETSIGDEF gives the default.
inline void add_write_signals(sigset_t& set) {
  for (int signal_number : kWriteSignals) sigaddset(&set, signal_number);
}

}  // namespace heapline
