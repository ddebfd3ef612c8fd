// When a point was measured: RFC 3339 timestamps in UTC, the one form the
// store accepts ("2026-03-01T12:00:00Z", optionally with a fraction of a
// second). Points are ordered by the instant, not by the text: a fraction
// sorts after the whole second as text ('.' < 'Z') but is later in time.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace heapline::bench {

// Now, to the second: "YYYY-MM-DDTHH:MM:SSZ".
std::string utc_now_rfc3339();
// The same without separators, for file names: "YYYYMMDDTHHMMSSZ".
std::string utc_now_compact();

// Nanoseconds since 1970-01-01T00:00:00Z of an RFC 3339 UTC timestamp
// "YYYY-MM-DDTHH:MM:SS[.F]Z" (F: 1 to 9 digits; the date a real one from
// 1970 to 2261, where the nanoseconds fit 64 bits; the second at most 59:
// no leap second, which POSIX time never gives and the exports' readers
// refuse);
// nullopt for anything else: another zone, a missing part,
// "Sun, 01 Mar 2026 12:00:00 GMT".
std::optional<std::int64_t> utc_time_nanoseconds(std::string_view text);

}  // namespace heapline::bench
