// HEAPLINE_* parsing (the interposer's config.cpp): any environment gives a
// configuration within range and, for each bad value, exactly one line of
// printable text naming the variable and quoting its value as written,
// never more, never a crash. The input is lines NAME=VALUE (the last one of
// a name wins), so the fuzzer works on the variables' values and, from the
// seed corpus, their names.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <string_view>

#include "config.h"
#include "output.h"
#include "text.h"

namespace {

std::map<std::string, std::string> g_environment;
std::string g_said;

const char* lookup(const char* name) {
  const auto found = g_environment.find(name);
  return found == g_environment.end() ? nullptr : found->second.c_str();
}

void check(bool property) {
  if (!property) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  g_environment.clear();
  g_said.clear();
  std::string_view text(reinterpret_cast<const char*>(data), size);
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    const std::size_t equals = line.find('=');
    // A NUL ends an environment entry: a name holding one is no variable.
    if (equals != std::string_view::npos && line.substr(0, equals).find('\0') == std::string_view::npos) {
      std::string value(line.substr(equals + 1));
      value.resize(std::strlen(value.c_str()));  // an environment value ends at its first NUL
      g_environment[std::string(line.substr(0, equals))] = value;
    }
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  }

  heapline::Config config;
  heapline::load_config(config, lookup, [](const char* line, std::size_t length) { g_said.append(line, length); });

  // One line per refused value, naming it, shown as written.
  std::size_t refused = 0;
  for (const auto& [name, value] : g_environment) {
    // Every setting, from config.cpp's own table: a setting added there
    // is checked here without a change.
    if (heapline::read_setting_alone(name.c_str(), value.c_str()) != 0) continue;
    ++refused;
    // The value quoted as a terminal shows it (heapline/terminal_text.h),
    // its first 80 bytes cut between two characters, and "..." when cut.
    char prefix[81];
    heapline::copy_utf8_prefix(prefix, sizeof prefix, value.c_str());
    std::string shown = heapline::terminal_text(prefix);
    if (value.size() > std::strlen(prefix)) shown += "...";
    check(g_said.find("heapline: " + name + "='" + shown + "' is not valid") != std::string::npos);
  }
  std::size_t lines = 0;
  for (std::size_t start = 0; start < g_said.size(); ++lines) {
    const std::size_t end = g_said.find('\n', start);
    check(end != std::string::npos && heapline::shows_as_written(std::string_view(g_said).substr(start, end - start)));
    start = end + 1;
  }
  check(lines == refused);
  check(g_said.empty() || g_said.back() == '\n');

  // Whatever was accepted is within range.
  check(config.interval_ns <= heapline::kMaxIntervalMs * 1'000'000);
  if (!config.precision.exact) {
    check(config.precision.budget_floor_bytes >= 1 && config.precision.budget_floor_bytes <= (std::uint64_t{1} << 40));
    check(config.precision.budget_divisor >= 1 && config.precision.budget_divisor <= (std::uint64_t{1} << 40));
  }
  check(config.root_pid >= 0 && config.root_pid <= heapline::kMaxPid);
  const std::size_t length = std::strlen(config.out_template);
  check(length > 0 && length < heapline::kMaxTemplateBytes);
  for (const char* c = config.out_template; *c != 0; ++c) {
    if (*c == '%') {
      check(c[1] == 'p' || c[1] == 'e' || c[1] == '%');
      ++c;
    }
  }
  // An accepted template always expands to a path, with the longest pid
  // and program name, and the pid inserted, under a short directory.
  char path[heapline::kMaxPath];
  const std::string longest_name(heapline::kMaxNameBytes, 'n');
  check(heapline::format_output_path(config.out_template, "/some/where", heapline::kMaxPid, longest_name.c_str(), true,
                                     path, heapline::kMaxPath - 8));
  return 0;
}
