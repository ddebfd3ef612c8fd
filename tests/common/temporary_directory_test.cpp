// heapline/temporary_directory.h: the launcher's and heapline-bench's one
// way to make a temporary directory, and the line that says why one could
// not be made.
#include <heapline/temporary_directory.h>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <string>

namespace heapline {
namespace {

namespace fs = std::filesystem;

// Sets TMPDIR for the test's scope and restores it.
class TmpdirIs {
 public:
  explicit TmpdirIs(const std::string& value) {
    if (const char* old = std::getenv("TMPDIR")) old_ = old;
    setenv("TMPDIR", value.c_str(), 1);
  }
  ~TmpdirIs() {
    if (old_) setenv("TMPDIR", old_->c_str(), 1);
    else unsetenv("TMPDIR");
  }

 private:
  std::optional<std::string> old_;
};

std::string refusal(const std::string& prefix) {
  try {
    make_temporary_directory(prefix);
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "(a directory was made)";
}

TEST(TemporaryDirectory, IsMadeInTmpdirWithThePrefixAndOnlyItsOwnerMayEnter) {
  const fs::path parent = fs::temp_directory_path() / ("heapline-tmpdir-test-" + std::to_string(getpid()));
  fs::create_directories(parent);
  {
    TmpdirIs tmpdir(parent.string());
    const fs::path made = make_temporary_directory("heapline-test-");
    EXPECT_EQ(made.parent_path(), parent);
    EXPECT_EQ(made.filename().string().rfind("heapline-test-", 0), 0u) << made;
    EXPECT_EQ(made.filename().string().size(), std::string("heapline-test-").size() + 6) << made;
    struct stat st {};
    ASSERT_EQ(stat(made.c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode));
    EXPECT_EQ(st.st_mode & 0777, 0700u);
  }
  fs::remove_all(parent);
}

TEST(TemporaryDirectory, WithoutTmpdirIsMadeInTmp) {
  TmpdirIs tmpdir("");
  const fs::path made = make_temporary_directory("heapline-test-");
  EXPECT_EQ(made.parent_path(), fs::path("/tmp"));
  fs::remove_all(made);
}

// One line: the directory it was to be made in and why, never the
// template that mkdtemp filled and that never existed (heapline-bench said
// "cannot create a temporary directory in /tmp/heapline-bench-RNAWkn").
TEST(TemporaryDirectory, ARefusalNamesTheParentAndWhy) {
  const fs::path parent = fs::temp_directory_path() / ("heapline-tmpdir-test-" + std::to_string(getpid()));
  fs::create_directories(parent);
  {
    TmpdirIs tmpdir((parent / "missing").string());
    EXPECT_EQ(refusal("heapline-bench-"),
              "cannot create a temporary directory in " + (parent / "missing").string() + ": No such file or directory");
  }
  std::ofstream(parent / "file") << "not a directory\n";
  {
    TmpdirIs tmpdir((parent / "file").string());
    EXPECT_EQ(refusal("heapline-plot."),
              "cannot create a temporary directory in " + (parent / "file").string() + ": Not a directory");
  }
  fs::remove_all(parent);
}

}  // namespace
}  // namespace heapline
