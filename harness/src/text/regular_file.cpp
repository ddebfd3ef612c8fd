#include "heapline_bench/text/regular_file.h"

#include <stdexcept>

#include "heapline/regular_file.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {

std::string read_regular_file(const std::string& path) {
  // What a user names here (a catalogue, calibrations, a comparison) is
  // kilobytes; a larger file is not one of them.
  constexpr std::size_t kLimit = std::size_t{256} << 20;
  std::string error;
  std::string text = heapline::RegularFile::open(path).read_all(kLimit, error);
  if (!error.empty()) throw std::runtime_error(terminal_text(error));
  return text;
}

}  // namespace heapline::bench
