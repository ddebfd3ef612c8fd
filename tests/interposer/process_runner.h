// Runs a program as a separate process for the process-level tests: chosen
// environment changes, working directory and stdin; stdout and stderr
// captured through files (no pipe can fill up and block).
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace heapline::test {

struct RunResult {
  int exit_code = -1;    // when the process exited
  int signal = 0;        // when it was killed
  std::string out;
  std::string err;
};

struct RunOptions {
  // Variables to set; a value of std::nullopt removes the variable.
  std::map<std::string, std::optional<std::string>> env;
  std::filesystem::path cwd;
  std::filesystem::path stdin_file;
};

RunResult run(const std::vector<std::string>& argv, const RunOptions& options = {});

// The same, in two steps, for a test that acts on the process while it runs
// (reads its output so far, signals it).
struct Started {
  int pid = -1;
  std::filesystem::path capture;  // holds "stdout" and "stderr"
  std::string out_so_far() const;
};
Started start(const std::vector<std::string>& argv, const RunOptions& options = {});
RunResult finish(const Started& started);
// Polls the process's stdout until it contains `text`; false after
// `timeout_ms` or when the process ended first.
bool wait_for_output(const Started& started, const std::string& text, int timeout_ms = 10000);

// A fresh directory under the build tree's temp area, removed by the fixture.
std::filesystem::path make_temp_dir(const std::string& label);

// The fixture of the process-level tests: each test gets a fresh directory of
// its own, dir_, removed after the test and kept when it failed, so that the
// reports and logs of a failure can be read. Base is ::testing::Test, or
// ::testing::TestWithParam<T> for a parameterised test.
template <typename Base = ::testing::Test>
class TempDirFixture : public Base {
 protected:
  explicit TempDirFixture(std::string label) : label_(std::move(label)) {}
  void SetUp() override { dir_ = make_temp_dir(label_); }
  void TearDown() override {
    if (!::testing::Test::HasFailure() && !dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::filesystem::path dir_;

 private:
  std::string label_;
};
class TempDirTest : public TempDirFixture<> {
 protected:
  using TempDirFixture::TempDirFixture;
};

std::string read_file(const std::filesystem::path& path);
nlohmann::json read_json(const std::filesystem::path& path);

// Every file in dir whose name matches the ECMAScript regex.
std::vector<std::filesystem::path> files_matching(const std::filesystem::path& dir, const std::string& regex);

// Options for a run with LD_PRELOAD=preload (empty: none) in `dir`, writing
// its report to dir/report_name, as the root of its run; `env` on top.
RunOptions preload_options(const std::string& preload, const std::filesystem::path& dir,
                           const std::string& report_name,
                           std::map<std::string, std::optional<std::string>> env = {});

// Every "key=INTEGER" in a program's output.
std::map<std::string, std::int64_t> parse_keys(const std::string& out);

// Checks the heapline/1 structure; returns an empty string or what is wrong.
std::string heapline_format_problem(const nlohmann::json& report);

}  // namespace heapline::test
