// The launcher's lines go out through heapline/say.h, the one door of the
// launcher's and heapline-bench's printed lines: "WHO: TEXT" on one line,
// and the summaries and screens of several lines (report_summary.h,
// process_tree.h, profile_summary.h, live_view.h), each line through the
// same door, the names in them escaped with terminal_text where they are
// built. WHO is "heapline" or "heapline SUBCOMMAND".
#pragma once

#include <iostream>
#include <string_view>

#include <heapline/say.h>

namespace heapline::launcher {

inline void say(std::string_view who, std::string_view text) { heapline::say(std::cerr, who, text); }
inline void say_lines(std::string_view lines) { heapline::say_lines(std::cerr, lines); }
inline void say_lines(std::ostream& out, std::string_view lines) { heapline::say_lines(out, lines); }

}  // namespace heapline::launcher
