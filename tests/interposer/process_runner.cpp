#include "process_runner.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <stdexcept>

extern char** environ;

namespace heapline::test {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_file(path)); }

RunOptions preload_options(const std::string& preload, const fs::path& dir, const std::string& report_name,
                           std::map<std::string, std::optional<std::string>> env) {
  RunOptions options;
  options.env = std::move(env);
  if (preload.empty()) {
    options.env["LD_PRELOAD"] = std::nullopt;
  } else {
    options.env["LD_PRELOAD"] = preload;
  }
  options.env["HEAPLINE_OUT"] = (dir / report_name).string();
  options.env.emplace("HEAPLINE_ROOT_PID", std::nullopt);
  options.cwd = dir;
  return options;
}

std::map<std::string, std::int64_t> parse_keys(const std::string& out) {
  std::map<std::string, std::int64_t> values;
  std::regex pair(R"((\w+)=(-?\d+))");
  for (auto it = std::sregex_iterator(out.begin(), out.end(), pair); it != std::sregex_iterator(); ++it) {
    values[(*it)[1]] = std::stoll((*it)[2]);
  }
  return values;
}

fs::path make_temp_dir(const std::string& label) {
  fs::path base = fs::temp_directory_path() / "heapline-tests";
  fs::create_directories(base);
  std::string pattern = (base / (label + ".XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed for " + pattern);
  return pattern;
}

Started start(const std::vector<std::string>& argv, const RunOptions& options) {
  fs::path capture = make_temp_dir("capture");
  fs::path out_path = capture / "stdout", err_path = capture / "stderr";

  std::map<std::string, std::string> env;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    std::string text = *entry;
    auto equals = text.find('=');
    if (equals != std::string::npos) env[text.substr(0, equals)] = text.substr(equals + 1);
  }
  for (const auto& [name, value] : options.env) {
    if (value) env[name] = *value;
    else env.erase(name);
  }
  std::vector<std::string> env_strings;
  for (const auto& [name, value] : env) env_strings.push_back(name + "=" + value);
  std::vector<char*> envp, args;
  for (auto& text : env_strings) envp.push_back(text.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& text : argv_copy) args.push_back(text.data());
  args.push_back(nullptr);

  pid_t child = fork();
  if (child < 0) throw std::runtime_error("fork failed");
  if (child == 0) {
    int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int in = open(options.stdin_file.empty() ? "/dev/null" : options.stdin_file.c_str(), O_RDONLY);
    if (out < 0 || err < 0 || in < 0) _exit(126);
    dup2(in, 0);
    dup2(out, 1);
    dup2(err, 2);
    if (!options.cwd.empty() && chdir(options.cwd.c_str()) != 0) _exit(126);
    execve(args[0], args.data(), envp.data());
    _exit(127);
  }
  return Started{child, capture};
}

std::string Started::out_so_far() const { return read_file(capture / "stdout"); }

bool wait_for_output(const Started& started, const std::string& text, int timeout_ms) {
  for (int waited = 0; waited < timeout_ms; waited += 5) {
    if (started.out_so_far().find(text) != std::string::npos) return true;
    siginfo_t info{};
    if (waitid(P_PID, static_cast<id_t>(started.pid), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid != 0) {
      return started.out_so_far().find(text) != std::string::npos;  // ended: one last look
    }
    usleep(5000);
  }
  return false;
}

RunResult finish(const Started& started) {
  const fs::path out_path = started.capture / "stdout", err_path = started.capture / "stderr";
  const fs::path& capture = started.capture;
  int status = 0;
  while (waitpid(started.pid, &status, 0) < 0) {
  }
  RunResult result;
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) result.signal = WTERMSIG(status);
  result.out = read_file(out_path);
  result.err = read_file(err_path);
  fs::remove_all(capture);
  return result;
}

RunResult run(const std::vector<std::string>& argv, const RunOptions& options) {
  return finish(start(argv, options));
}

std::vector<fs::path> files_matching(const fs::path& dir, const std::string& regex) {
  std::vector<fs::path> found;
  std::regex pattern(regex);
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (std::regex_match(entry.path().filename().string(), pattern)) found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());
  return found;
}

std::string heapline_format_problem(const nlohmann::json& r) {
  if (r.value("format", "") != "heapline/1") return "format is not heapline/1";
  for (const char* key : {"pid", "ppid", "start_unix_ns", "duration_ns", "peak_bytes", "peak_time_ns", "final_bytes",
                          "publishes", "interval_ns"}) {
    if (!r.contains(key) || !r[key].is_number_integer()) return std::string("missing integer ") + key;
  }
  for (const char* key : {"exe", "allocator", "size_basis"}) {
    if (!r.contains(key) || !r[key].is_string()) return std::string("missing string ") + key;
  }
  const auto& precision = r.at("precision");
  for (const char* key : {"bound_bytes", "budget_floor_bytes", "budget_divisor", "budget_bytes", "max_threshold_bytes",
                          "max_threads"}) {
    if (!precision.contains(key) || !precision[key].is_number_integer()) return std::string("precision lacks ") + key;
  }
  std::string mode = precision.value("mode", "");
  if (mode != "exact" && mode != "batched") return "precision.mode is " + mode;
  if (precision["bound_bytes"].get<std::int64_t>() > precision["budget_bytes"].get<std::int64_t>()) {
    return "precision.bound_bytes is above budget_bytes";
  }
  for (const char* key : {"alloc", "free", "realloc"}) {
    if (!r.at("calls").contains(key)) return std::string("calls lacks ") + key;
  }
  const auto& samples = r.at("samples");
  if (!samples.is_array() || samples.empty()) return "no samples";
  if (samples.size() > 4096) return "more samples than the fixed buffer holds";
  std::int64_t previous_t = -1;
  for (const auto& sample : samples) {
    if (!sample.is_array() || sample.size() != 3) return "a sample is not [t, live, max]";
    if (sample[0].get<std::int64_t>() < previous_t) return "sample times go backwards";
    if (sample[2].get<std::int64_t>() < sample[1].get<std::int64_t>()) return "a sample's max is below its live value";
    previous_t = sample[0].get<std::int64_t>();
  }
  if (r["peak_bytes"].get<std::int64_t>() < r["final_bytes"].get<std::int64_t>()) return "peak below final";
  // The resident series: readings in time order, never negative; its
  // figures, when there are any, are its largest reading (or more: a
  // converted report's figures may hold one the series merged) and its last.
  if (r.contains("resident_samples")) {
    const auto& readings = r["resident_samples"];
    if (!readings.is_array() || readings.size() > 4096) return "resident_samples is not a bounded array";
    std::int64_t previous = -1;
    for (const auto& reading : readings) {
      if (!reading.is_array() || reading.size() != 3) return "a resident sample is not [t, bytes, max]";
      if (reading[0].get<std::int64_t>() < previous) return "resident sample times go backwards";
      if (reading[1].get<std::int64_t>() < 0 || reading[2].get<std::int64_t>() < reading[1].get<std::int64_t>()) {
        return "a resident sample is negative or its max below its value";
      }
      previous = reading[0].get<std::int64_t>();
    }
    if (r.contains("resident")) {
      if (readings.empty()) return "resident figures without a series";
      for (const auto& reading : readings) {
        if (reading[2].get<std::int64_t>() > r["resident"]["peak_bytes"].get<std::int64_t>()) {
          return "a resident sample above the resident peak";
        }
      }
      if (readings.back()[1] != r["resident"]["final_bytes"]) return "resident final is not the last reading";
    }
  }
  const std::string ended = r.value("ended", "");
  if (ended != "exit" && ended != "without-exit" && ended != "running") return "ended is '" + ended + "'";
  if (ended != "exit" && !r.contains("last_sample_ns")) return "ended without exit but no last_sample_ns";
  if (!r.contains("markers") || !r["markers"].is_array()) return "no markers array";
  for (const auto& marker : r["markers"]) {
    if (!marker.is_array() || marker.size() != 2 || !marker[0].is_number_integer() || !marker[1].is_string()) {
      return "a marker is not [t_ns, name]";
    }
  }
  return "";
}

}  // namespace heapline::test
