// oracle_check: runs oracle_workload from one seed under libheapline.so,
// batched (the default) and with HEAPLINE_PRECISION=exact, and checks every
// report of both process trees against the workload's ground truth and
// against each other (oracle.h). The runtime's own share comes from a
// calibration run first.
//
//   oracle_check --workload PATH --library PATH --seed S [--dir DIR] [--keep] [--timeout SECONDS]
//
// Prints one line "oracle seed S: ok ..." or every problem and the command
// that replays the seed; exit status 0, 1 (problems) or 2 (could not run).
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "oracle.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using namespace heapline::oracle;

struct Options {
  std::string workload, library;
  std::uint64_t seed = 0;
  bool have_seed = false;
  std::string dir;
  bool keep = false;
  int timeout_s = 25;  // each of the three runs: a ctest case stays below 60 s
};

struct Finished {
  int pid = 0;
  int status = 0;
  bool timed_out = false;
  std::uint64_t elapsed_ns = 0;  // from before the fork to after the wait
  std::string err;
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The environment of a run: ours, without any HEAPLINE_* setting or preload
// of the caller's, plus `settings`.
std::vector<std::string> environment(const std::map<std::string, std::string>& settings) {
  std::vector<std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string text = *entry;
    if (text.starts_with("HEAPLINE_") || text.starts_with("LD_PRELOAD=")) continue;
    env.push_back(text);
  }
  for (const auto& [name, value] : settings) env.push_back(name + "=" + value);
  return env;
}

// Runs argv in its own process group; kills the group after `timeout_s`.
Finished run(const std::vector<std::string>& argv, const std::map<std::string, std::string>& settings,
             const fs::path& dir, int timeout_s) {
  std::vector<std::string> env_strings = environment(settings), args = argv;
  std::vector<char*> envp, argp;
  for (auto& text : env_strings) envp.push_back(text.data());
  envp.push_back(nullptr);
  for (auto& text : args) argp.push_back(text.data());
  argp.push_back(nullptr);
  const fs::path out = dir / "stdout", err = dir / "stderr";
  const auto started = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    perror("oracle_check: fork");
    std::exit(2);
  }
  if (pid == 0) {
    setpgid(0, 0);
    const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int in_fd = open("/dev/null", O_RDONLY);
    if (out_fd < 0 || err_fd < 0 || in_fd < 0) _exit(126);
    dup2(in_fd, 0);
    dup2(out_fd, 1);
    dup2(err_fd, 2);
    execve(argp[0], argp.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  Finished finished;
  finished.pid = pid;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_s);
  for (;;) {
    const pid_t done = waitpid(pid, &finished.status, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      finished.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &finished.status, 0);
      break;
    }
    timespec pause{0, 5'000'000};
    nanosleep(&pause, nullptr);
  }
  finished.elapsed_ns = static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - started).count());
  kill(-pid, SIGKILL);  // nothing of the tree outlives it
  finished.err = read_text(err);
  return finished;
}

// One run of the workload in `dir`, its tree loaded; problems of the run
// itself (exit status, stderr) into `problems`.
Run run_workload(const Options& options, const std::string& mode, const std::vector<std::string>& arguments,
                 const std::map<std::string, std::string>& settings, std::vector<std::string>& problems) {
  const fs::path dir = fs::path(options.dir) / mode;
  fs::create_directories(dir);
  std::vector<std::string> argv{options.workload};
  argv.insert(argv.end(), arguments.begin(), arguments.end());
  argv.insert(argv.end(), {"--dir", dir.string()});
  std::map<std::string, std::string> env = settings;
  env["LD_PRELOAD"] = options.library;
  env["HEAPLINE_OUT"] = (dir / "r.%p.json").string();
  const Finished finished = run(argv, env, dir, options.timeout_s);
  if (finished.timed_out) problems.push_back("[" + mode + "] timed out after " + std::to_string(options.timeout_s) + " s");
  if (!WIFEXITED(finished.status) || WEXITSTATUS(finished.status) != 0) {
    problems.push_back("[" + mode + "] the workload ended with status " + std::to_string(finished.status));
  }
  std::istringstream err(finished.err);
  for (std::string line; std::getline(err, line);) problems.push_back("[" + mode + "] stderr: " + line);
  Run loaded = load_run(dir, finished.pid, mode);
  loaded.elapsed_ns = finished.elapsed_ns;
  return loaded;
}

void usage() {
  std::cerr << "usage: oracle_check --workload PATH --library PATH --seed S [--dir DIR] [--keep] [--timeout SECONDS]\n";
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options options;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--workload" && has_value) options.workload = argv[++i];
    else if (arg == "--library" && has_value) options.library = argv[++i];
    else if (arg == "--seed" && has_value) {
      options.seed = std::strtoull(argv[++i], nullptr, 10);
      options.have_seed = true;
    } else if (arg == "--dir" && has_value) options.dir = argv[++i];
    else if (arg == "--keep") options.keep = true;
    else if (arg == "--timeout" && has_value) options.timeout_s = std::atoi(argv[++i]);
    else usage();
  }
  if (options.workload.empty() || options.library.empty() || !options.have_seed) usage();
  return options;
}

std::string replay_command(int argc, char** argv) {
  std::string command;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc) {
      ++i;
      continue;
    }
    if (i > 0) command.push_back(' ');
    command.append(argv[i]);
  }
  return command;
}

}  // namespace

int main(int argc, char** argv) {
  Options options = parse(argc, argv);
  const bool own_dir = options.dir.empty();
  if (own_dir) {
    std::string pattern = (fs::temp_directory_path() / "heapline-oracle.XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) {
      perror("oracle_check: mkdtemp");
      return 2;
    }
    options.dir = pattern;
  }
  // The sampling interval from the seed: the default, 1 ms, or every publish.
  std::map<std::string, std::string> settings;
  const char* intervals[] = {nullptr, "1", "0"};
  if (const char* interval = intervals[options.seed % 3]) settings["HEAPLINE_INTERVAL_MS"] = interval;

  std::vector<std::string> problems;
  std::map<std::string, std::string> exact = settings;
  exact["HEAPLINE_PRECISION"] = "exact";
  // The runtime's share, measured where nothing is pending (exact).
  const Run calibration = run_workload(options, "calibration", {"--calibrate"}, exact, problems);
  const Runtime runtime = derive_runtime(calibration, problems);
  for (std::string& problem : check_run(calibration, runtime)) problems.push_back(std::move(problem));

  const std::string seed = std::to_string(options.seed);
  const Run batched_run = run_workload(options, "batched", {"--seed", seed}, settings, problems);
  const Run exact_run = run_workload(options, "exact", {"--seed", seed}, exact, problems);
  for (const Run* run : {&batched_run, &exact_run}) {
    for (std::string& problem : check_run(*run, runtime)) problems.push_back(std::move(problem));
  }
  for (std::string& problem : check_pair(batched_run, exact_run, runtime)) problems.push_back(std::move(problem));

  std::int64_t bound = 0, error = 0;
  for (const auto& [pid, process] : batched_run.processes) {
    if (!process.has_report || !process.report.contains("precision")) continue;
    const std::int64_t b = process.report["precision"].value("bound_bytes", std::int64_t{0});
    if (b > bound) bound = b;
  }
  if (auto root = batched_run.processes.find(batched_run.root_pid);
      root != batched_run.processes.end() && root->second.has_report && root->second.last().peak_designed) {
    error = root->second.report.value("peak_bytes", std::int64_t{0}) - root->second.last().heap_peak -
            runtime.fresh_bytes;
  }
  const std::string interval = settings.contains("HEAPLINE_INTERVAL_MS") ? settings["HEAPLINE_INTERVAL_MS"] : "10";
  if (problems.empty()) {
    std::cout << "oracle seed " << options.seed << ": ok (" << batched_run.processes.size() << " + "
              << exact_run.processes.size() << " processes, interval " << interval << " ms, root peak error "
              << error << " B, largest bound " << bound << " B)\n";
    if (own_dir && !options.keep) fs::remove_all(options.dir);
    return 0;
  }
  std::cout << "oracle seed " << options.seed << ": " << problems.size() << " problems (interval " << interval
            << " ms; runtime: fresh " << runtime.fresh_bytes << " B, per parked thread " << runtime.parked_bytes
            << " B)\n";
  for (const std::string& problem : problems) std::cout << "  " << problem << "\n";
  std::cout << "  files: " << options.dir << "\n  replay: " << replay_command(argc, argv) << "\n";
  return 1;
}
