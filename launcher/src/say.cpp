// The one door of the launcher's own lines on stderr (say.h).
#include <iostream>
#include <string>

#include <heapline/report_reader.h>

#include "say.h"

namespace heapline::launcher {

std::string one_line(std::string_view text) { return control_bytes_escaped(text, Backslash::kKept); }

void say(std::string_view who, std::string_view text) { std::cerr << who << ": " << one_line(text) << "\n"; }

}  // namespace heapline::launcher
