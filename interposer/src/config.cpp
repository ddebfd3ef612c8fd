#include "config.h"

#include <charconv>
#include <cstring>

#include "text.h"

namespace heapline {
namespace {

bool parse_u64(const char* begin, const char* end, std::uint64_t* out) {
  if (begin == end) return false;
  std::uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc{} || ptr != end) return false;
  *out = value;
  return true;
}

// "heapline: HEAPLINE_X='value' is not valid (expected ...); using the default ..."
void report_bad_value(const char* name, const char* value, const char* expected, const char* default_used) {
  char line[512];
  TextSink text(line, sizeof line);
  text.append("heapline: ");
  text.append(name);
  text.append("='");
  std::size_t length = std::strlen(value);
  text.append(value, length > 80 ? 80 : length);
  if (length > 80) text.append("...");
  text.append("' is not valid (expected ");
  text.append(expected);
  text.append("); using the default ");
  text.append(default_used);
  text.append('\n');
  write_stderr(line, text.size());
}

}  // namespace

bool parse_interval_ms(const char* text, std::uint64_t* out_ms) {
  std::uint64_t value;
  if (!parse_u64(text, text + std::strlen(text), &value) || value > kMaxIntervalMs) return false;
  *out_ms = value;
  return true;
}

bool parse_precision(const char* text, Precision* out) {
  if (std::strcmp(text, "exact") == 0) {
    *out = Precision{};
    out->exact = true;
    return true;
  }
  if (std::strcmp(text, "batched") == 0) {
    *out = Precision{};
    return true;
  }
  const char* end = text + std::strlen(text);
  const char* comma = std::strchr(text, ',');
  Precision parsed;
  if (!parse_u64(text, comma ? comma : end, &parsed.budget_bytes)) return false;
  if (comma && !parse_u64(comma + 1, end, &parsed.budget_divisor)) return false;
  // A budget of 0 bytes is exact mode spelled differently; a divisor of 0
  // would divide by zero. Both stay below 2^40 so the budget's arithmetic
  // cannot overflow.
  if (parsed.budget_bytes < 1 || parsed.budget_divisor < 1) return false;
  if (parsed.budget_bytes > (std::uint64_t{1} << 40) || parsed.budget_divisor > (std::uint64_t{1} << 40)) return false;
  *out = parsed;
  return true;
}

bool parse_switch(const char* text, bool* out) {
  if (std::strcmp(text, "0") == 0) *out = false;
  else if (std::strcmp(text, "1") == 0) *out = true;
  else return false;
  return true;
}

bool parse_on_off(const char* text, bool* out) {
  if (std::strcmp(text, "on") == 0) *out = true;
  else if (std::strcmp(text, "off") == 0) *out = false;
  else return parse_switch(text, out);
  return true;
}

bool parse_follow(const char* text, bool* follow_children) {
  if (std::strcmp(text, "tree") == 0) *follow_children = true;
  else if (std::strcmp(text, "command") == 0) *follow_children = false;
  else return false;
  return true;
}

void load_config(Config& config, const char* (*lookup)(const char*)) {
  if (const char* out = lookup("HEAPLINE_OUT"); out != nullptr && *out != 0) {
    if (std::strcmp(out, "off") == 0) {
      config.output_off = true;
    } else if (std::strlen(out) + 64 < kMaxPath) {  // room for a pid and a temp suffix
      std::strcpy(config.out_template, out);
    } else {
      report_bad_value("HEAPLINE_OUT", out, "a path template shorter than 4000 bytes", "heapline.%e.%p.json");
    }
  }
  if (const char* interval = lookup("HEAPLINE_INTERVAL_MS"); interval != nullptr) {
    std::uint64_t ms = kDefaultIntervalMs;
    if (!parse_interval_ms(interval, &ms)) {
      report_bad_value("HEAPLINE_INTERVAL_MS", interval, "whole milliseconds from 0 to 86400000", "10");
    }
    config.interval_ns = ms * 1'000'000;
  }
  if (const char* precision = lookup("HEAPLINE_PRECISION"); precision != nullptr) {
    if (!parse_precision(precision, &config.precision)) {
      report_bad_value("HEAPLINE_PRECISION", precision, "exact, batched, or BYTES[,DIVISOR] such as 1048576,100",
                       "batched (262144,100)");
    }
  }
  if (const char* summary = lookup("HEAPLINE_SUMMARY"); summary != nullptr) {
    if (!parse_switch(summary, &config.summary)) report_bad_value("HEAPLINE_SUMMARY", summary, "0 or 1", "0");
  }
  if (const char* mapped = lookup("HEAPLINE_MAPPED"); mapped != nullptr) {
    if (!parse_on_off(mapped, &config.mapped)) report_bad_value("HEAPLINE_MAPPED", mapped, "on or off", "on");
  }
  if (const char* follow = lookup("HEAPLINE_FOLLOW"); follow != nullptr) {
    if (!parse_follow(follow, &config.follow_children)) report_bad_value("HEAPLINE_FOLLOW", follow, "tree or command", "tree");
  }
#if HEAPLINE_TEST_HOOKS  // only in the tests' build of the library, never in libheapline.so
  if (const char* kill = lookup("HEAPLINE_TEST_KILL_WRITER"); kill != nullptr) {
    if (std::strcmp(kill, "mid-write") == 0) config.kill_writer = KillWriter::kMidWrite;
    else if (std::strcmp(kill, "before-rename") == 0) config.kill_writer = KillWriter::kBeforeRename;
  }
#endif
}

}  // namespace heapline
