// The interposer's differential oracle (docs/design.md, "The differential
// oracle"): the reports libheapline.so wrote for a run of oracle_workload,
// checked against the ground truth the workload wrote beside them, in the
// batched and the exact precision.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace heapline::oracle {

enum CallKind { kAlloc = 0, kFree = 1, kRealloc = 2, kCallKinds = 3 };
using Calls = std::array<std::int64_t, kCallKinds>;

struct ChildTruth {
  int index = 0;
  int pid = 0;
  std::string kind;  // "fork": runs a workload; "exec": forks, then execs the workload
  int status = 0;    // waitpid's
};

// One process image's truth.<pid>.<image>.json.
struct Truth {
  int pid = 0;
  int image = 0;
  std::string role;  // root, fork, exec
  bool exec_into = false;  // this image exec'd the next: its report is the next image's
  std::int64_t heap_final = 0;
  std::int64_t heap_peak = 0;
  bool peak_designed = false;
  std::int64_t heap_inherited = 0;
  std::int64_t mapped_final = 0;
  std::int64_t mapped_peak = 0;
  std::int64_t mapped_inherited = 0;
  Calls calls{};
  std::int64_t threads_created = 0;
  std::int64_t threads_alive_high = 0;
  std::int64_t parked_at_fork = 0;
  std::int64_t parked_runtime_bytes = 0;  // their DTVs, which a fork child keeps
  std::vector<std::string> markers;
  std::vector<ChildTruth> children;
};

Truth parse_truth(const nlohmann::json& json);

// One pid: its images in order (each but the last exec'd the next) and the
// report of the last.
struct Process {
  int pid = 0;
  std::vector<Truth> images;
  bool has_report = false;
  nlohmann::json report;
  const Truth& last() const { return images.back(); }
};

// A run: every process of its tree, from the root's pid.
struct Run {
  std::string mode;  // "batched", or "exact" and "calibration" (both HEAPLINE_PRECISION=exact)
  int root_pid = 0;
  std::map<int, Process> processes;
  // How long the whole tree ran, as the checker measured it (0: unknown):
  // no process's duration_ns can be longer.
  std::uint64_t elapsed_ns = 0;
  std::vector<std::string> problems;  // of the tree itself (missing files, statuses, leftovers)
};

// Reads DIR (truth.PID.IMAGE.json, r.PID.json) for the tree of `root_pid`.
Run load_run(const std::filesystem::path& dir, int root_pid, const std::string& mode);

// What the runtime itself allocates, taken from the calibration tree: the
// workload cannot see these blocks, the library can.
struct Runtime {
  std::int64_t fresh_bytes = 0;     // held by a fresh image's runtime at exit
  Calls fresh_calls{};              // a fresh image's own calls
  Calls thread_calls{};             // each thread created and joined (ld.so's DTV)
  Calls fork_calls{};               // a fork child's own calls
  // Not a constant: the DTV of each thread alive at a fork, which the
  // child keeps, is 304 or 320 bytes as glibc's free chunks fall; the
  // workload reads each one (truth: parked_runtime_bytes). The
  // calibration checks that reading: this is its child's.
  std::int64_t parked_bytes = 0;
};
Runtime derive_runtime(const Run& calibration, std::vector<std::string>& problems);

// Where a process stands in its tree: its runtime bytes and calls, and a
// name for messages ("root", "root/fork1", "root/exec0").
struct Expectation {
  std::string name;
  std::int64_t runtime_bytes = 0;
  Calls runtime_calls{};
};
std::map<int, Expectation> expectations(const Run& run, const Runtime& runtime);

// Every check of one process's report against its truth; `exact`: the run
// was HEAPLINE_PRECISION=exact; `designed`: the workload designs its peak
// (every run but the calibration). Returns what is wrong, one line each.
std::vector<std::string> check_process(const Process& process, const Expectation& expected, bool exact,
                                       bool designed = true);

// The batched and the exact run of one seed, process by process (paired by
// their place in the tree).
std::vector<std::string> check_pair(const Run& batched, const Run& exact, const Runtime& runtime);

// Every check of a whole run: the tree, then each process.
std::vector<std::string> check_run(const Run& run, const Runtime& runtime);

}  // namespace heapline::oracle
