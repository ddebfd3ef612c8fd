// HEAPLINE_* environment variables: parsed once per process, during the lazy
// init of the first allocation call, without allocating. A bad value is
// reported with one line on stderr naming the variable and the default used;
// heapline never refuses to run the program.
#pragma once

#include <cstddef>
#include <cstdint>

namespace heapline {

constexpr std::size_t kMaxPath = 4096;

// HEAPLINE_PRECISION: the process's precision budget, max(budget_bytes,
// peak / budget_divisor), which the threads' thresholds share
// (threshold_policy.h); or exact (every change published).
struct Precision {
  bool exact = false;
  std::uint64_t budget_bytes = 256 * 1024;
  std::uint64_t budget_divisor = 100;
};

// Test-only: in the tests' build of the library (HEAPLINE_TEST_HOOKS,
// libheapline_test_hooks.so), HEAPLINE_TEST_KILL_WRITER makes the writer
// SIGKILL its own process at a chosen point, to prove a killed writer leaves
// no partial file under the final name. libheapline.so ignores the variable.
enum class KillWriter { kNever, kMidWrite, kBeforeRename };

struct Config {
  char out_template[kMaxPath] = "heapline.%e.%p.json";
  bool output_off = false;
  std::uint64_t interval_ns = 10'000'000;
  Precision precision;
  bool summary = false;
  // Mapped memory (mapped_memory.h): HEAPLINE_MAPPED=on|off.
  bool mapped = true;
  // HEAPLINE_FOLLOW=tree (every process that loads the library writes its
  // own report) or command (only the command: HEAPLINE_ROOT_PID, or the first
  // process of the run when that is unset; the processes it starts write
  // nothing).
  bool follow_children = true;
  KillWriter kill_writer = KillWriter::kNever;
};

constexpr std::uint64_t kDefaultIntervalMs = 10;
constexpr std::uint64_t kMaxIntervalMs = 86'400'000;  // one day

// Each returns false (and leaves *out alone) for a value it does not accept.
bool parse_interval_ms(const char* text, std::uint64_t* out_ms);
// "batched" (the default budget), "exact", or "BYTES[,DIVISOR]".
bool parse_precision(const char* text, Precision* out);
// "0" or "1".
bool parse_switch(const char* text, bool* out);
// "on" or "off" (also "1" or "0").
bool parse_on_off(const char* text, bool* out);
// "tree" (true: the command and every process it starts) or "command".
bool parse_follow(const char* text, bool* follow_children);

// Reads the environment through `lookup` (getenv in production) and reports
// each bad value on stderr.
void load_config(Config& config, const char* (*lookup)(const char*));

}  // namespace heapline
