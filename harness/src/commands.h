// The subcommands of heapline-bench. main.cpp parses the command line into
// these option structs; each function runs one subcommand and returns the
// process exit status.
#pragma once

#include <string>
#include <vector>

namespace heapline::bench {

// Exit statuses shared by every subcommand.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRefused = 1;   // invalid measurement or input: nothing recorded
inline constexpr int kExitUsage = 2;
inline constexpr int kExitInterrupted = 130;

struct Locations {
  std::string catalogue;   // scenarios.json
  std::string bin_dir;     // where malloc_churn and the libraries were built
  std::string source_dir;  // the source tree ({source} in commands)
};

struct OverheadOptions {
  Locations where;
  std::string scenario;
  std::string library;  // path, or "none" for A/A
  std::string runs;     // validated here, for a message that says what to fix
  std::vector<std::string> command;  // empty: the catalogue's
  double scale = 1.0;
  bool json = false;
};

struct SuiteOptions {
  Locations where;
  std::string library;  // empty: libheapline.so next to heapline-bench
  int runs = 10;
  double scale = 1.0;
  std::vector<std::string> only;
};

int run_overhead(const OverheadOptions& options);
int run_suite(const SuiteOptions& options);

}  // namespace heapline::bench
