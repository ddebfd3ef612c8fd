#include "heapline_bench/measurement/utc_time.h"

#include <ctime>

namespace heapline::bench {
namespace {

// Days from 1970-01-01 to a date of the proleptic Gregorian calendar
// (Howard Hinnant's days_from_civil).
std::int64_t days_from_civil(std::int64_t year, unsigned month, unsigned day) {
  year -= month <= 2;
  const std::int64_t era = (year >= 0 ? year : year - 399) / 400;
  const auto year_of_era = static_cast<unsigned>(year - era * 400);
  const unsigned day_of_year = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1;
  const unsigned day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
  return era * 146097 + static_cast<std::int64_t>(day_of_era) - 719468;
}

unsigned days_in_month(unsigned year, unsigned month) {
  static constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

// `count` decimal digits at `at`, or nullopt.
std::optional<unsigned> digits(std::string_view text, std::size_t at, std::size_t count) {
  if (at + count > text.size()) return std::nullopt;
  unsigned value = 0;
  for (std::size_t i = at; i < at + count; ++i) {
    if (text[i] < '0' || text[i] > '9') return std::nullopt;
    value = value * 10 + static_cast<unsigned>(text[i] - '0');
  }
  return value;
}

std::string utc_now(const char* format) {
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char text[32];
  std::strftime(text, sizeof text, format, &utc);
  return text;
}

}  // namespace

std::string utc_now_rfc3339() { return utc_now("%Y-%m-%dT%H:%M:%SZ"); }

std::string utc_now_compact() { return utc_now("%Y%m%dT%H%M%SZ"); }

std::optional<std::int64_t> utc_time_nanoseconds(std::string_view text) {
  // YYYY-MM-DDTHH:MM:SS
  // 0123456789012345678
  const auto year = digits(text, 0, 4), month = digits(text, 5, 2), day = digits(text, 8, 2);
  const auto hour = digits(text, 11, 2), minute = digits(text, 14, 2), second = digits(text, 17, 2);
  if (!year || !month || !day || !hour || !minute || !second) return std::nullopt;
  if (text[4] != '-' || text[7] != '-' || text[10] != 'T' || text[13] != ':' || text[16] != ':') return std::nullopt;
  // From 1970 to 2261: nanoseconds since 1970 fit 64 bits until 2262-04-11.
  if (*year < 1970 || *year > 2261) return std::nullopt;
  if (*month < 1 || *month > 12 || *day < 1 || *day > days_in_month(*year, *month)) return std::nullopt;
  // No second 60: the clock heapline writes from (POSIX time) never gives
  // one, and the exports' readers (Python's datetime, JavaScript's Date,
  // spreadsheets) refuse it, at 23:59:60 as at any other minute.
  if (*hour > 23 || *minute > 59 || *second > 59) return std::nullopt;
  std::size_t at = 19;
  std::int64_t nanoseconds = 0;
  if (at < text.size() && text[at] == '.') {
    ++at;
    std::size_t count = 0;
    std::int64_t scale = 100000000;
    while (at < text.size() && text[at] >= '0' && text[at] <= '9') {
      if (++count > 9) return std::nullopt;
      nanoseconds += (text[at] - '0') * scale;
      scale /= 10;
      ++at;
    }
    if (count == 0) return std::nullopt;
  }
  if (at + 1 != text.size() || text[at] != 'Z') return std::nullopt;
  const std::int64_t seconds = days_from_civil(*year, *month, *day) * 86400 + *hour * 3600 + *minute * 60 + *second;
  return seconds * 1000000000 + nanoseconds;
}

}  // namespace heapline::bench
