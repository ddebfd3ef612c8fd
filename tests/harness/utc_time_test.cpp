// utc_time.h: the one form of time the store accepts, RFC 3339 in UTC, read
// to the nanosecond and refused whole when any part is not a real instant.
#include "heapline_bench/measurement/utc_time.h"

#include <gtest/gtest.h>

#include <chrono>
#include <regex>

namespace heapline::bench {
namespace {

constexpr std::int64_t kSecond = 1'000'000'000;

TEST(UtcTime, ReadsTheInstantToTheNanosecond) {
  EXPECT_EQ(utc_time_nanoseconds("1970-01-01T00:00:00Z"), 0);
  EXPECT_EQ(utc_time_nanoseconds("2026-12-02T12:00:00Z"), 1796212800 * kSecond);
  EXPECT_EQ(utc_time_nanoseconds("2024-02-29T23:59:59Z"), 1709251199 * kSecond);  // a leap day
  EXPECT_EQ(utc_time_nanoseconds("2261-12-31T23:59:59Z"), 9214646399 * kSecond);  // the last year that fits
  // A fraction of 1 to 9 digits, each in its place.
  EXPECT_EQ(utc_time_nanoseconds("2026-12-02T12:00:00.5Z"), 1796212800 * kSecond + 500'000'000);
  EXPECT_EQ(utc_time_nanoseconds("2026-12-02T12:00:00.000000001Z"), 1796212800 * kSecond + 1);
  EXPECT_EQ(utc_time_nanoseconds("2026-12-02T12:00:00.123456789Z"), 1796212800 * kSecond + 123'456'789);
}

TEST(UtcTime, RefusesAnythingThatIsNotOneRealUtcInstant) {
  for (const char* text : {
           "",
           "2026-12-02",
           "2026-12-02T12:00:00",          // no zone
           "2026-12-02T12:00:00+00:00",    // another form of the zone
           "2026-12-02t12:00:00Z",         // lowercase separator
           "2026-12-02 12:00:00Z",
           "2026-12-02T12:00:00Zjunk",
           "2026-12-02T12:00:00.Z",          // a point without digits
           "2026-12-02T12:00:00.1234567890Z",  // ten digits
           "2026-12-02T12:00:00,5Z",
           "2026-13-01T00:00:00Z",
           "2026-00-01T00:00:00Z",
           "2025-02-29T00:00:00Z",  // not a leap year
           "2100-02-29T00:00:00Z",  // a century that is not
           "2026-04-31T00:00:00Z",
           "2026-12-00T00:00:00Z",
           "2026-12-02T24:00:00Z",
           "2026-12-02T12:60:00Z",
           "2026-12-02T12:00:61Z",
           // Second 60: no clock heapline reads gives it, Python's datetime
           // and JavaScript's Date refuse it, at any minute of the day.
           "2026-12-01T10:00:60Z",
           "2016-12-31T23:59:60Z",
           "2016-12-31T23:59:60.5Z",
           "1969-12-31T23:59:59Z",  // before 1970
           "2262-01-01T00:00:00Z",  // past what 64 bits of nanoseconds hold
           "2026-1a-02T12:00:00Z",
           "+026-12-02T12:00:00Z",
           "Sun, 01 Mar 2026 12:00:00 GMT",
       }) {
    EXPECT_EQ(utc_time_nanoseconds(text), std::nullopt) << text;
  }
  EXPECT_EQ(utc_time_nanoseconds("2000-02-29T00:00:00Z"), 951782400 * kSecond);  // 400 years: a leap year
}

TEST(UtcTime, NowIsWrittenInTheFormItIsRead) {
  const std::string now = utc_now_rfc3339();
  EXPECT_TRUE(std::regex_match(now, std::regex(R"(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z)"))) << now;
  const auto read = utc_time_nanoseconds(now);
  ASSERT_TRUE(read.has_value()) << now;
  const std::int64_t system_now =
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::system_clock::now().time_since_epoch())
          .count();
  EXPECT_LE(*read, system_now);
  EXPECT_GT(*read, system_now - 60 * kSecond);
  const std::string compact = utc_now_compact();
  EXPECT_TRUE(std::regex_match(compact, std::regex(R"(\d{8}T\d{6}Z)"))) << compact;
}

}  // namespace
}  // namespace heapline::bench
