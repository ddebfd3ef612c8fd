#include "heapline_bench/text/text.h"

#include <cstdio>

namespace heapline::bench {

std::size_t find_control_character(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = heapline::utf8_character_length(text, at);
    if (length == 0) {  // a byte that is not UTF-8: no character at all
      ++at;
      continue;
    }
    if (heapline::is_control_character(text.substr(at, length))) return at;
    at += length;
  }
  return std::string_view::npos;
}

std::string control_character_code(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  // One byte (C0, DEL) or two (C1: 0xC2 then the code point's low byte).
  const unsigned code = byte(at) < 0x80 ? byte(at) : ((byte(at) & 0x1Fu) << 6) | (byte(at + 1) & 0x3Fu);
  char shown[8];
  std::snprintf(shown, sizeof shown, "U+%04X", code);
  return shown;
}

bool is_commit_name(std::string_view text) {
  if (text.size() < 4 || text.size() > 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace heapline::bench
