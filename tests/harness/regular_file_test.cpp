// Reading a file a user named: its bytes, or one line saying why not, and
// never a descriptor left open behind either (the harness reads many files
// in one run: a catalogue, calibrations, every release of a comparison).
#include "heapline_bench/text/regular_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

namespace heapline::bench {
namespace {

namespace fs = std::filesystem;

std::size_t open_descriptors() {
  std::size_t count = 0;
  for ([[maybe_unused]] const auto& entry : fs::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

class RegularFile : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("heapline-regular-file-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

std::string refusal(const std::string& path) {
  try {
    read_regular_file(path);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
}

TEST_F(RegularFile, ReadsTheBytesAndAnythingElseIsOneLineWithNoDescriptorLeftOpen) {
  const fs::path file = dir_ / "catalogue.json";
  std::ofstream(file) << std::string(100000, 'x') << "\nend";  // more than one read's buffer
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::size_t before = open_descriptors();
  for (int i = 0; i < 50; ++i) {
    EXPECT_EQ(read_regular_file(file).size(), 100004u);
    EXPECT_EQ(refusal(fifo), fifo.string() + " is a FIFO, not a regular file");
    EXPECT_EQ(refusal(dir_.string()), dir_.string() + " is a directory, not a regular file");
    EXPECT_EQ(refusal((dir_ / "missing").string()), (dir_ / "missing").string() + ": No such file or directory");
  }
  EXPECT_EQ(open_descriptors(), before);
}

// A name is shown as the one escaping function shows it: a newline in it
// cannot start a line of its own in the message.
TEST_F(RegularFile, ANameIsShownEscaped) {
  const std::string name = (dir_ / "a\nb").string();
  const std::string message = refusal(name);
  EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  EXPECT_NE(message.find(": No such file or directory"), std::string::npos) << message;
}

}  // namespace
}  // namespace heapline::bench
