// How a value a user writes is read, one rule per kind, for every numeric
// option of heapline and heapline-bench (heapline/option_checks.h, their
// command lines) and every HEAPLINE_* setting of the library (config.cpp):
//
// - a whole number: decimal digits, with a '-' first only where its range
//   has negative numbers; no '+', no space, no 0x, no exponent, no fraction;
// - a number: decimal, with an optional fraction and exponent (1.5, 2e-3);
//   no '+', no space, no hexadecimal (0x10 is not 16 to someone who wrote
//   a number of seconds), never NaN or an infinity, nor a value the double
//   cannot hold (1e-400); its range is closed, both ends stated, each 0 or
//   a magnitude from 1e-12 to 1e12 (sensible_number_limit), so no option
//   takes a value far below anything it can measure ("above 0" took 1e-300);
// - a list: names with one separator between two (a:b, x,y), none empty
//   (no separator first, last or twice) and none twice;
// - a switch: on or 1, off or 0, nothing else;
// - the heap sampler's mean (HEAPLINE_SAMPLE): off, on (kOnSampleMeanBytes),
//   or a whole number of bytes from 1 with an optional k, m or g (binary
//   units); 0 is not a mean (off turns the sampler off).
//
// Each reader takes the whole text or refuses it, and every value it takes
// is within the range it was given. No allocation, no exception: the
// library reads its settings inside the first allocation call of its host.
#pragma once

#include <charconv>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <type_traits>

namespace heapline {

// A whole number of type Integer in [low, high], decimal digits only.
template <typename Integer>
bool read_whole_number(std::string_view text, Integer low, Integer high, Integer* out) {
  static_assert(std::is_integral_v<Integer>);
  if (text.empty()) return false;
  Integer value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end != text.data() + text.size() || value < low || value > high) return false;
  *out = value;
  return true;
}

// The ends a number's range may have: 0, or a magnitude from
// kSmallestNumberLimit to kLargestNumberLimit.
constexpr double kSmallestNumberLimit = 1e-12;
constexpr double kLargestNumberLimit = 1e12;
constexpr bool sensible_number_limit(double limit) {
  const double magnitude = limit < 0 ? -limit : limit;
  return limit == 0 || (magnitude >= kSmallestNumberLimit && magnitude <= kLargestNumberLimit);
}
constexpr bool sensible_number_range(double low, double high) {
  return sensible_number_limit(low) && sensible_number_limit(high) && low < high;
}

// A finite decimal number in [low, high], a sensible range; nothing is
// taken from a range that is not one.
inline bool read_number(std::string_view text, double low, double high, double* out) {
  if (text.empty() || !sensible_number_range(low, high)) return false;
  double value = 0;
  const auto [end, error] =
      std::from_chars(text.data(), text.data() + text.size(), value, std::chars_format::general);
  if (error != std::errc{} || end != text.data() + text.size() || !std::isfinite(value)) return false;
  if (value > high || value < low) return false;
  *out = value;
  return true;
}

// What is wrong with a list (read_list).
enum class ListProblem { kNone, kEmpty, kEmptyPart, kRepeated };

// Names separated by `separator`: calls each_name(name) for every one, in
// order, when none is empty (a separator first, last or beside another)
// and none is there twice; otherwise returns the problem, with the name
// given twice in *repeated. No allocation.
template <typename EachName>
ListProblem read_list(std::string_view text, char separator, EachName&& each_name,
                      std::string_view* repeated = nullptr) {
  if (text.empty()) return ListProblem::kEmpty;
  std::size_t start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    const std::string_view name = text.substr(start, end == std::string_view::npos ? text.npos : end - start);
    if (name.empty()) return ListProblem::kEmptyPart;
    // Every earlier name is before `start`: compare with each of them.
    for (std::size_t earlier = 0; earlier < start;) {
      const std::size_t earlier_end = text.find(separator, earlier);
      if (text.substr(earlier, earlier_end - earlier) == name) {
        if (repeated != nullptr) *repeated = name;
        return ListProblem::kRepeated;
      }
      earlier = earlier_end + 1;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  start = 0;
  for (;;) {
    const std::size_t end = text.find(separator, start);
    each_name(text.substr(start, end == std::string_view::npos ? text.npos : end - start));
    if (end == std::string_view::npos) return ListProblem::kNone;
    start = end + 1;
  }
}

// on or 1 (true), off or 0 (false).
inline bool read_switch(std::string_view text, bool* out) {
  if (text == "on" || text == "1") {
    *out = true;
    return true;
  }
  if (text == "off" || text == "0") {
    *out = false;
    return true;
  }
  return false;
}

// HEAPLINE_SAMPLE=on: the mean a user who asks for a profile gets; the
// largest mean a user may ask for.
constexpr std::uint64_t kOnSampleMeanBytes = 4 * 1024 * 1024;
constexpr std::uint64_t kMaxSampleMeanBytes = std::uint64_t{1} << 40;

// off (0, the sampler off), on (kOnSampleMeanBytes), or a mean from 1 to
// kMaxSampleMeanBytes bytes, with an optional k, m or g (binary units).
inline bool read_sample_mean(std::string_view text, std::uint64_t* out_bytes) {
  if (text == "off") {
    *out_bytes = 0;
    return true;
  }
  if (text == "on") {
    *out_bytes = kOnSampleMeanBytes;
    return true;
  }
  unsigned shift = 0;
  if (!text.empty()) {
    switch (text.back()) {
      case 'k': case 'K': shift = 10; break;
      case 'm': case 'M': shift = 20; break;
      case 'g': case 'G': shift = 30; break;
      default: break;
    }
  }
  if (shift != 0) text.remove_suffix(1);
  std::uint64_t value = 0;
  if (!read_whole_number<std::uint64_t>(text, 1, kMaxSampleMeanBytes >> shift, &value)) return false;
  *out_bytes = value << shift;
  return true;
}

// What a good HEAPLINE_SAMPLE looks like, as a refusal says it.
#define HEAPLINE_SAMPLE_MEAN_RULE \
  "off, on (4m), or a mean in bytes from 1 to 1099511627776 with an optional k, m or g such as 4m"
static_assert(kOnSampleMeanBytes == 4u << 20 && kMaxSampleMeanBytes == 1099511627776u,
              "HEAPLINE_SAMPLE_MEAN_RULE says them");

}  // namespace heapline
