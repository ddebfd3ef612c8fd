// The one door of every line the launcher and heapline-bench print: text
// goes out through heapline::terminal_line (heapline/terminal_text.h), so a
// control character, a byte that is not UTF-8 or a character that reorders
// the line is shown as \xNN, never sent to the terminal, where a newline
// would forge a line and an escape sequence would drive the terminal. The
// names a message quotes are escaped where it is put together
// (terminal_text, which also escapes the backslash, so they read apart from
// a newline); they pass the door unchanged.
#pragma once

#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <ostream>
#include <sstream>
#include <string>
#include <string_view>

#include "heapline/terminal_text.h"

namespace heapline {

// "WHO: TEXT" on one line: a newline inside TEXT is shown, never obeyed.
inline void say(std::ostream& out, std::string_view who, std::string_view text) {
  out << terminal_line(who) << ": " << terminal_line(text) << '\n';
}

// TEXT on one line, as it is otherwise.
inline void say_line(std::ostream& out, std::string_view text) { out << terminal_line(text) << '\n'; }

// Lines put together for the terminal (a summary, a table, a screen), each
// ending with '\n': every line through the door. The text between two
// newlines is one line; whoever built it escaped the names in it.
inline void say_lines(std::ostream& out, std::string_view lines) {
  std::string shown;
  for (std::size_t start = 0; start < lines.size();) {
    std::size_t end = lines.find('\n', start);
    if (end == std::string_view::npos) end = lines.size();
    shown += terminal_line(lines.substr(start, end - start));
    shown += '\n';
    start = end + 1;
  }
  out << shown;
}

// Another program's words (a failed command's stderr, gnuplot's errors)
// under a line of the program's own: each line indented by four spaces, so
// that none can pass for a line of ours ("heapline: ..."), the blank end
// trimmed. Printed through say_lines, which escapes each line.
inline std::string indented(std::string_view text) {
  std::string out = "    ";
  for (const char c : text) {
    out += c;
    if (c == '\n') out += "    ";
  }
  while (!out.empty() && (out.back() == ' ' || out.back() == '\n')) out.pop_back();
  return out;
}

// Whole lines streamed together, printed through say_lines when the
// statement ends:
//   Say(std::cerr) << scenario << ": " << figure << "\n";
class Say {
 public:
  explicit Say(std::ostream& out) : out_(out) {}
  Say(const Say&) = delete;
  Say& operator=(const Say&) = delete;
  ~Say() { say_lines(out_, text_.str()); }
  template <class T>
  Say& operator<<(const T& value) {
    text_ << value;
    return *this;
  }
  Say& operator<<(std::ostream& (*manipulator)(std::ostream&)) {
    text_ << manipulator;
    return *this;
  }

 private:
  std::ostream& out_;
  std::ostringstream text_;
};

// Whether standard output is a pipe or socket whose reader has gone (its
// write end reports an error to poll: POLLERR, or POLLHUP for a socket).
inline bool standard_output_reader_gone() {
  pollfd out{STDOUT_FILENO, POLLOUT, 0};
  return ::poll(&out, 1, 0) == 1 && (out.revents & (POLLERR | POLLHUP)) != 0;
}

// The end of a program's standard output: everything written to it is
// flushed, and a write that failed (a full disk behind `> file`, /dev/full)
// is one line on stderr and status `failed_status` rather than a silent 0
// with the output lost. `status` when all of it was written. A reader that
// went away (`| head -1`) chose to read no more: nothing is said, and the
// status is `status`, or when that is 0 the one a process ended by SIGPIPE
// gives (the programs ignore SIGPIPE, heapline/write_signals.h, so that
// such a reader never ends their work half done).
inline int finish_standard_output(std::string_view who, int status, int failed_status) {
  // The reason is said when these flushes gave it (a write that failed
  // earlier left errno to whatever came after).
  errno = 0;
  std::cout.flush();
  int error = errno;
  if (std::fflush(stdout) != 0) error = errno;
  if (!std::cout.fail() && std::ferror(stdout) == 0) return status;
  if (error == EPIPE || standard_output_reader_gone()) return status != 0 ? status : 128 + SIGPIPE;
  std::cerr << terminal_line(std::string(who) + ": cannot write to standard output" +
                             (error != 0 ? std::string(": ") + std::strerror(error) : std::string()) +
                             "; what it holds is not whole")
            << '\n';
  return status != 0 ? status : failed_status;
}

}  // namespace heapline
