#include "heapline_bench/text/text.h"

namespace heapline::bench {

std::size_t find_control_character(std::string_view text) {
  for (std::size_t at = 0; at < text.size(); ++at) {
    const unsigned char c = static_cast<unsigned char>(text[at]);
    if (c < 0x20 || c == 0x7F) return at;
  }
  return std::string_view::npos;
}

bool is_commit_name(std::string_view text) {
  if (text.size() < 4 || text.size() > 64) return false;
  for (char c : text)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  return true;
}

}  // namespace heapline::bench
