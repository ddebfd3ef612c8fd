// HEAPLINE_* environment variables: parsed once per process, during the lazy
// init of the first allocation call, without allocating, by one table of
// typed, range-checked readers (config.cpp). A bad value is reported with
// one line on stderr naming the variable, what a good value looks like and
// the default used; heapline never refuses to run the program.
#pragma once

#include <cstddef>
#include <cstdint>

#include <heapline/option_values.h>

namespace heapline {

constexpr std::size_t kMaxPath = 4096;

// HEAPLINE_PRECISION: the process's precision budget, max(budget_floor_bytes,
// peak / budget_divisor) (heapline/precision_budget_rule.h), which the threads' thresholds share
// (threshold_policy.h); or exact (every change published).
// The defaults, written once: the settings below, and the texts a bad
// value's line says (config.cpp), come from these. The docs that state them
// are held to them by tests/interposer/defaults_test.cpp.
#define HEAPLINE_DEFAULT_INTERVAL_MS 10
#define HEAPLINE_DEFAULT_BUDGET_BYTES 262144
#define HEAPLINE_DEFAULT_BUDGET_DIVISOR 100
#define HEAPLINE_TEXT_OF(value) HEAPLINE_TEXT_OF_EXPANDED(value)
#define HEAPLINE_TEXT_OF_EXPANDED(value) #value

struct Precision {
  bool exact = false;
  std::uint64_t budget_floor_bytes = HEAPLINE_DEFAULT_BUDGET_BYTES;
  std::uint64_t budget_divisor = HEAPLINE_DEFAULT_BUDGET_DIVISOR;
};

// Test-only: in the tests' build of the library (HEAPLINE_TEST_HOOKS,
// libheapline_test_hooks.so), HEAPLINE_TEST_KILL_WRITER makes the writer
// SIGKILL its own process at a chosen point, to prove a killed writer leaves
// no partial file under the final name: the report's (mid-write,
// before-rename) or the live file's (live-before-rename: made and mapped,
// not yet named). libheapline.so ignores the variable.
enum class KillWriter { kNever, kMidWrite, kBeforeRename, kLiveBeforeRename };

// HEAPLINE_SAMPLE=on (kOnSampleMeanBytes, heapline/option_values.h): the
// mean a user who asks for a profile gets. The sampler is off unless asked
// for: at this mean it costs churn's hot path about a point of instructions
// and a large-block workload tens of points (docs/design.md, "The heap
// sampler"), beyond the library's overhead goal.

// The longest HEAPLINE_RUN_ID, its NUL included.
constexpr std::size_t kRunIdBytes = 64;

struct Config {
  char out_template[kMaxPath] = "heapline.%e.%p.json";
  bool output_off = false;
  std::uint64_t interval_ns = std::uint64_t{HEAPLINE_DEFAULT_INTERVAL_MS} * 1'000'000;
  Precision precision;
  bool summary = false;
  // Mapped memory (mapped_memory.h): HEAPLINE_MAPPED=on|off.
  bool mapped = true;
  // HEAPLINE_FOLLOW=tree (every process that loads the library writes its
  // own report) or command (only the command: HEAPLINE_ROOT_PID, or the first
  // process of the run when that is unset; the processes it starts write
  // nothing).
  bool follow_children = true;
  // HEAPLINE_ROOT_PID (set by the launcher): the pid of the command, whose
  // report keeps the plain name; 0 when unset.
  int root_pid = 0;
  // The heap sampler (heap_sampler.h): HEAPLINE_SAMPLE, the mean distance
  // between samples in bytes, 0 when off (the default); HEAPLINE_SAMPLE_SEED,
  // a fixed seed for its draws, 0 for one from the clock and the pid.
  std::uint64_t sample_mean_bytes = 0;
  std::uint64_t sample_seed = 0;
  // HEAPLINE_RUN_ID (set by the launcher for every process of a run):
  // recorded in the report as "run_id", by which the launcher tells its
  // run's reports from another's; empty when unset.
  char run_id[kRunIdBytes] = {};
  KillWriter kill_writer = KillWriter::kNever;
};

constexpr std::uint64_t kDefaultIntervalMs = HEAPLINE_DEFAULT_INTERVAL_MS;
constexpr std::uint64_t kMaxIntervalMs = 86'400'000;  // one day
// The largest pid Linux gives (PID_MAX_LIMIT, 2^22).
constexpr int kMaxPid = 4'194'304;
// The longest expansion of HEAPLINE_OUT: room is left in a path for the
// starting directory's prefix of a relative template, a pid and the
// temporary names' suffixes.
constexpr std::size_t kMaxTemplateBytes = kMaxPath - 64;
// The longest program name %e stands for (NAME_MAX).
constexpr std::size_t kMaxNameBytes = 255;

// Each returns false (and leaves *out alone) for a value it does not accept.
bool parse_interval_ms(const char* text, std::uint64_t* out_ms);
// "batched" (the default budget), "exact", or "BYTES[,DIVISOR]".
bool parse_precision(const char* text, Precision* out);
// Every switch (HEAPLINE_SUMMARY, HEAPLINE_MAPPED): "on" or "1", "off" or "0".
bool parse_switch(const char* text, bool* out);
// "tree" (true: the command and every process it starts) or "command".
bool parse_follow(const char* text, bool* follow_children);
// A process id, 1 to kMaxPid, in decimal digits only.
bool parse_pid(const char* text, int* pid);
// 1 to 63 ASCII letters, digits, '.', '_' or '-' (the launcher's: the
// launcher's pid and 16 hexadecimal digits); anything else is refused.
bool parse_run_id(const char* text, char (&out)[kRunIdBytes]);
// HEAPLINE_OUT: "off", or a path template whose only % sequences are %p,
// %e and %%, and whose longest expansion (%p 7 digits, %e kMaxNameBytes) is
// shorter than kMaxTemplateBytes.
bool parse_out_template(const char* text, Config* config);

// HEAPLINE_SAMPLE: "off" (0), "on" (kOnSampleMeanBytes), or bytes from 1
// to 2^40 with an optional k, m or g (binary) suffix; "0" is refused (not a
// mean: off is spelled off).
bool parse_sample_mean(const char* text, std::uint64_t* out_bytes);
// HEAPLINE_SAMPLE_SEED: decimal digits, a 64-bit number.
bool parse_seed(const char* text, std::uint64_t* out);

// Whether the HEAPLINE_* variable `name`'s own reader accepts `text`, as
// load_config reads it: 1 accepted, 0 refused (load_config says one line),
// -1 `name` is not a setting (never read). From the same table as
// load_config, so that a check of what it says needs no list of its own.
int read_setting_alone(const char* name, const char* text);
// The name of the table's setting `index`, nullptr past the last: every
// HEAPLINE_* variable load_config reads.
const char* setting_name(std::size_t index);

// Reads the environment through `lookup` (getenv in production) and reports
// each bad value with one line through `say` (stderr in production).
void load_config(Config& config, const char* (*lookup)(const char*),
                 void (*say)(const char* line, std::size_t size) = nullptr);

// The process's settings, read from the environment through the table once
// (load_config), by the first to ask, and copied to each later caller: the
// allocator's resolution asks first, as it must know whether to sample
// before the process's init (both inside the first allocation call). Silent:
// say_refused_settings says the refused values. In secure mode (set-user-ID
// and the like) the environment is not read: the defaults, and no output.
void read_process_settings(Config& out);
// One line on stderr per value read_process_settings refused (the init's,
// once per process).
void say_refused_settings();

}  // namespace heapline
