// The one door of the launcher's own lines on stderr: "WHO: TEXT", one line.
// The paths, program names, markers and error texts in TEXT hold what files,
// programs and users wrote: a control byte or DEL in them is shown as \xNN
// (one_line: heapline::control_bytes_escaped, the backslash kept), never
// sent to the terminal, where a newline would forge a second line and an
// escape sequence would drive the terminal. Text made printable before
// (printable_text, which also escapes the backslash) passes unchanged.
// WHO is "heapline" or "heapline SUBCOMMAND". The summaries
// (report_summary.h) are several lines, each made printable where they are
// built.
#pragma once

#include <string>
#include <string_view>

namespace heapline::launcher {

std::string one_line(std::string_view text);
void say(std::string_view who, std::string_view text);

}  // namespace heapline::launcher
