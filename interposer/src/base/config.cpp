#include "config.h"

#include <atomic>
#include <cstring>
#include <string_view>

#include <heapline/option_values.h>

#include "os.h"
#include "text.h"

namespace heapline {
namespace {

// Every number of a setting is read by heapline/option_values.h's one rule
// for a whole number (decimal digits only), within its range.
bool parse_u64(const char* begin, const char* end, std::uint64_t* out, std::uint64_t low = 0,
               std::uint64_t high = UINT64_MAX) {
  return read_whole_number<std::uint64_t>(std::string_view(begin, static_cast<std::size_t>(end - begin)), low, high,
                                          out);
}

// "heapline: HEAPLINE_X='value' is not valid (expected ...); using the default ..."
void report_bad_value(const char* name, const char* value, const char* expected, const char* default_used,
                      void (*say)(const char*, std::size_t)) {
  char line[512];
  TextSink text(line, sizeof line);
  text.append("heapline: ");
  text.append(name);
  text.append("='");
  // The value as a terminal shows it (TextSink::append_shown): whatever its
  // bytes, the line stays one line of text. At most 80 bytes of it, cut
  // between two characters.
  char shown[81];
  copy_utf8_prefix(shown, sizeof shown, value);
  text.append_shown(shown);
  if (std::strlen(value) > std::strlen(shown)) text.append("...");
  text.append("' is not valid (expected ");
  text.append(expected);
  text.append("); using the default ");
  text.append(default_used);
  text.append('\n');
  say(line, text.size());
}

}  // namespace

bool parse_interval_ms(const char* text, std::uint64_t* out_ms) {
  return parse_u64(text, text + std::strlen(text), out_ms, 0, kMaxIntervalMs);
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
  // A budget of 0 bytes is exact mode spelled differently; a divisor of 0
  // would divide by zero. Both stay below 2^40 so the budget's arithmetic
  // cannot overflow.
  constexpr std::uint64_t kLargest = std::uint64_t{1} << 40;
  if (!parse_u64(text, comma ? comma : end, &parsed.budget_floor_bytes, 1, kLargest)) return false;
  if (comma && !parse_u64(comma + 1, end, &parsed.budget_divisor, 1, kLargest)) return false;
  *out = parsed;
  return true;
}

bool parse_switch(const char* text, bool* out) { return read_switch(text, out); }

bool parse_follow(const char* text, bool* follow_children) {
  if (std::strcmp(text, "tree") == 0) *follow_children = true;
  else if (std::strcmp(text, "command") == 0) *follow_children = false;
  else return false;
  return true;
}

bool parse_pid(const char* text, int* pid) {
  std::uint64_t value;
  if (!parse_u64(text, text + std::strlen(text), &value, 1, static_cast<std::uint64_t>(kMaxPid))) return false;
  *pid = static_cast<int>(value);
  return true;
}

bool parse_run_id(const char* text, char (&out)[kRunIdBytes]) {
  std::size_t length = 0;
  for (; text[length] != 0; ++length) {
    const char c = text[length];
    const bool allowed = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                         c == '_' || c == '-';
    if (!allowed || length + 1 >= kRunIdBytes) return false;
  }
  if (length == 0) return false;
  std::memcpy(out, text, length + 1);
  return true;
}

bool parse_sample_mean(const char* text, std::uint64_t* out_bytes) { return read_sample_mean(text, out_bytes); }

bool parse_seed(const char* text, std::uint64_t* out) { return parse_u64(text, text + std::strlen(text), out); }

bool parse_out_template(const char* text, Config* config) {
  if (std::strcmp(text, "off") == 0) {
    config->output_off = true;
    return true;
  }
  // The longest path the template can expand to: %p a pid of up to 7
  // digits, %e a file name of up to NAME_MAX bytes.
  const std::size_t length = std::strlen(text);
  std::size_t longest = 0;
  for (const char* c = text; *c != 0; ++c) {
    if (*c != '%') {
      ++longest;
      continue;
    }
    if (c[1] == 'p') longest += 7;
    else if (c[1] == 'e') longest += kMaxNameBytes;
    else if (c[1] == '%') longest += 1;
    else return false;
    ++c;
  }
  if (length == 0 || longest >= kMaxTemplateBytes) return false;
  // The launcher's rule for a name it writes (heapline/output_file.h): a
  // newline or an escape in a file's name breaks scripts that list names.
  if (!shows_as_written(std::string_view(text, length))) return false;
  std::memcpy(config->out_template, text, length + 1);
  config->output_off = false;
  return true;
}

namespace {

// One HEAPLINE_* variable: its reader (false: the value is refused and the
// config keeps its default), what a good value looks like, and the default.
struct Setting {
  const char* name;
  bool (*read)(const char* text, Config& config);
  const char* expected;
  const char* default_used;
};

// Every switch is read alike (heapline/option_values.h).
constexpr const char kSwitchRule[] = "on or 1, off or 0";

constexpr Setting kSettings[] = {
    {"HEAPLINE_OUT", [](const char* text, Config& c) { return parse_out_template(text, &c); },
     "off, or a path template whose only % sequences are %p, %e and %%, expanding to under 4032 bytes, every "
     "character one a terminal shows as it is",
     "heapline.%e.%p.json"},
    {"HEAPLINE_INTERVAL_MS",
     [](const char* text, Config& c) {
       std::uint64_t ms;
       if (!parse_interval_ms(text, &ms)) return false;
       c.interval_ns = ms * 1'000'000;
       return true;
     },
     "whole milliseconds from 0 to 86400000", HEAPLINE_TEXT_OF(HEAPLINE_DEFAULT_INTERVAL_MS)},
    {"HEAPLINE_PRECISION", [](const char* text, Config& c) { return parse_precision(text, &c.precision); },
     "exact, batched, or BYTES[,DIVISOR] such as 1048576,100", "batched (" HEAPLINE_TEXT_OF(HEAPLINE_DEFAULT_BUDGET_BYTES) "," HEAPLINE_TEXT_OF(HEAPLINE_DEFAULT_BUDGET_DIVISOR) ")"},
    {"HEAPLINE_SUMMARY", [](const char* text, Config& c) { return parse_switch(text, &c.summary); }, kSwitchRule, "off"},
    {"HEAPLINE_MAPPED", [](const char* text, Config& c) { return parse_switch(text, &c.mapped); }, kSwitchRule, "on"},
    {"HEAPLINE_FOLLOW", [](const char* text, Config& c) { return parse_follow(text, &c.follow_children); },
     "tree or command", "tree"},
    {"HEAPLINE_ROOT_PID", [](const char* text, Config& c) { return parse_pid(text, &c.root_pid); },
     "the command's process id from 1 to 4194304, which the launcher sets", "unset: this process is the command"},
    {"HEAPLINE_SAMPLE", [](const char* text, Config& c) { return parse_sample_mean(text, &c.sample_mean_bytes); },
     HEAPLINE_SAMPLE_MEAN_RULE, "off"},
    {"HEAPLINE_SAMPLE_SEED", [](const char* text, Config& c) { return parse_seed(text, &c.sample_seed); },
     "a number of decimal digits below 2^64", "0 (from the clock)"},
    {"HEAPLINE_RUN_ID", [](const char* text, Config& c) { return parse_run_id(text, c.run_id); },
     "1 to 63 letters, digits, '.', '_' or '-', which the launcher sets", "unset: no run_id in the report"},
#if HEAPLINE_TEST_HOOKS  // only in the tests' build of the library, never in libheapline.so
    {"HEAPLINE_TEST_KILL_WRITER",
     [](const char* text, Config& c) {
       if (std::strcmp(text, "mid-write") == 0) c.kill_writer = KillWriter::kMidWrite;
       else if (std::strcmp(text, "before-rename") == 0) c.kill_writer = KillWriter::kBeforeRename;
       else if (std::strcmp(text, "live-before-rename") == 0) c.kill_writer = KillWriter::kLiveBeforeRename;
       else return false;
       return true;
     },
     "mid-write, before-rename or live-before-rename", "never"},
#endif
};

}  // namespace

void load_config(Config& config, const char* (*lookup)(const char*), void (*say)(const char*, std::size_t)) {
  for (const Setting& setting : kSettings) {
    const char* text = lookup(setting.name);
    if (text == nullptr || setting.read(text, config)) continue;
    report_bad_value(setting.name, text, setting.expected, setting.default_used, say != nullptr ? say : write_stderr);
  }
}

const char* setting_name(std::size_t index) {
  return index < sizeof kSettings / sizeof kSettings[0] ? kSettings[index].name : nullptr;
}

const char* setting_rule(const char* name) {
  for (const Setting& setting : kSettings)
    if (std::strcmp(setting.name, name) == 0) return setting.expected;
  return nullptr;
}

int read_setting_alone(const char* name, const char* text) {
  for (const Setting& setting : kSettings) {
    if (std::strcmp(setting.name, name) != 0) continue;
    Config config;
    return setting.read(text, config) ? 1 : 0;
  }
  return -1;
}

namespace {

enum SettingsState : int { kUnread, kReading, kRead };
std::atomic<int> g_settings_state{kUnread};
Config g_settings;  // written by the one reader, then only read
// The lines for the values the reader refused, said by say_refused_settings:
// at most one line (under 512 bytes) per setting.
char g_refused[sizeof kSettings / sizeof kSettings[0] * 512];
std::size_t g_refused_size = 0;

void keep_refused_line(const char* line, std::size_t size) {
  if (size > sizeof g_refused - g_refused_size) return;
  std::memcpy(g_refused + g_refused_size, line, size);
  g_refused_size += size;
}

void read_environment(Config& config, void (*say)(const char*, std::size_t)) {
  if (os::secure_mode()) {
    // Set-user-ID and the like: the environment is the caller's, not this
    // process's owner's. No setting is read and nothing is written (a path
    // chosen by another user, created with these privileges).
    config.output_off = true;
    return;
  }
  load_config(config, os::environment, say);
}

}  // namespace

void read_process_settings(Config& out) {
  if (g_settings_state.load(std::memory_order_acquire) == kRead) {
    out = g_settings;
    return;
  }
  int expected = kUnread;
  if (g_settings_state.compare_exchange_strong(expected, kReading, std::memory_order_acq_rel)) {
    read_environment(g_settings, keep_refused_line);
    g_settings_state.store(kRead, std::memory_order_release);
    out = g_settings;
    return;
  }
  // Another thread is reading them (or this one was, interrupted by a
  // signal handler): the same table on the same environment, the same
  // result. Never waits: the reader may be this thread.
  read_environment(out, [](const char*, std::size_t) {});
}

void say_refused_settings() {
  if (g_settings_state.load(std::memory_order_acquire) == kRead && g_refused_size > 0) {
    write_stderr(g_refused, g_refused_size);
  }
}

}  // namespace heapline
