// The one door of the launcher's own lines on stderr (say.h).
#include <cstdio>
#include <iostream>
#include <string>

#include "say.h"

namespace heapline::launcher {

std::string one_line(std::string_view text) {
  std::string line;
  line.reserve(text.size());
  for (const unsigned char c : text) {
    if (c < 0x20 || c == 0x7f) {
      char code[8];
      std::snprintf(code, sizeof code, "\\x%02x", c);
      line += code;
    } else {
      line += static_cast<char>(c);
    }
  }
  return line;
}

void say(std::string_view who, std::string_view text) { std::cerr << who << ": " << one_line(text) << "\n"; }

}  // namespace heapline::launcher
