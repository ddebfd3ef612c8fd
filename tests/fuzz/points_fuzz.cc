// The point reader (points.jsonl): any bytes give points and problems, never
// a crash, and a line's verdict is the same whether it is read in the store
// or alone (parse_point_line).
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <string_view>

#include "heapline_bench/history/point_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto read = heapline::bench::read_points(text, "fuzz.jsonl", heapline::bench::RawTimes::read);
  if (read.points.size() != read.lines.size()) std::abort();
  for (std::size_t i = 0; i < read.points.size(); ++i) {
    // The accepted line, found again by its number, parses alone.
    std::size_t begin = 0;
    for (int line = 1; line < read.lines[i]; ++line) begin = text.find('\n', begin) + 1;
    const std::size_t end = text.find('\n', begin);
    const std::string_view line = text.substr(begin, end == std::string_view::npos ? text.size() - begin : end - begin);
    try {
      heapline::bench::parse_point_line(line);
    } catch (const std::exception&) {
      std::abort();
    }
  }
  return 0;
}
