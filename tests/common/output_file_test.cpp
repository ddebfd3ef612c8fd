// heapline/output_file.h at its seams that a program cannot reach on
// purpose: a name that becomes something other than a regular file between
// the staging of the outputs and their commit.
#include <heapline/output_file.h>

#include <gtest/gtest.h>
#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace heapline {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Each of three staged outputs in turn made a symbolic link before the
// commit: the refusal names that file (it named the next one, or printed
// freed memory: the files already in place were erased from the list the
// name was read from), the ones before it are in place, none after it, and
// no temporary is left.
TEST(OutputFiles, ANameThatBecameALinkBeforeTheCommitIsTheOneNamed) {
  for (int turned = 0; turned < 3; ++turned) {
    char dir_template[] = "/tmp/output-file-XXXXXX";
    ASSERT_NE(::mkdtemp(dir_template), nullptr);
    const fs::path dir = dir_template;
    std::ofstream(dir / "victim") << "victim";
    const fs::path names[] = {dir / "a.txt", dir / "b.txt", dir / "c.txt"};
    OutputFiles outputs;
    for (const fs::path& name : names) outputs.claim("", name.string());
    for (const fs::path& name : names) outputs.stage(name.string(), "new " + name.filename().string());
    fs::create_symlink(dir / "victim", names[turned]);
    try {
      outputs.commit();
      ADD_FAILURE() << "committed through a link at " << names[turned];
    } catch (const OutputRefused& refused) {
      EXPECT_EQ(std::string(refused.what()),
                names[turned].string() + " is a symbolic link now, not a regular file; nothing more was replaced");
    }
    EXPECT_EQ(read_file(dir / "victim"), "victim");
    for (int i = 0; i < 3; ++i) {
      if (i < turned) EXPECT_EQ(read_file(names[i]), "new " + names[i].filename().string()) << turned << " " << i;
      if (i > turned) EXPECT_FALSE(fs::exists(names[i])) << turned << " " << i;
    }
    std::size_t left = 0;
    for (const auto& entry : fs::directory_iterator(dir)) left += entry.path().filename().string().rfind(".heapline-", 0) == 0;
    EXPECT_EQ(left, 0u) << turned;
    fs::remove_all(dir);
  }
}


// Two names of one command where one goes through the other (compare
// --json X --out X: the JSON at X, the table at X/release-comparison.md)
// cannot both be written: refused at the claim, before the work, in
// either order, and so is an output through or on the way to a file the
// command reads. A name that only starts like the other is no clash.
TEST(OutputFiles, AnOutputOnTheWayToAnotherOrToAnInputIsRefused) {
  char dir_template[] = "/tmp/output-file-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const OutputRules make_parents{true, 0};
  auto refusal = [](auto&& claim) {
    try {
      claim();
    } catch (const OutputRefused& refused) {
      return std::string(refused.what());
    }
    return std::string("not refused");
  };
  {
    OutputFiles outputs;
    outputs.claim("--json x", dir + "/x");
    EXPECT_EQ(refusal([&] { outputs.claim("--out x", dir + "/x/t.md", make_parents); }),
              "--out x: would be written inside --json x, another output of this command (each output needs a name of "
              "its own)");
    outputs.claim("", dir + "/xy/t.md", make_parents);
  }
  {
    OutputFiles outputs;
    outputs.claim("--out x", dir + "/./x/t.md", make_parents);
    EXPECT_EQ(refusal([&] { outputs.claim("--json x", dir + "/x"); }),
              "--json x: lies on the way to --out x, another output of this command (each output needs a name of its "
              "own)");
  }
  {
    OutputFiles outputs;
    outputs.reads("the store", dir + "/points.jsonl");
    EXPECT_EQ(refusal([&] { outputs.claim("--out points.jsonl", dir + "/points.jsonl/page.md", make_parents); }),
              "--out points.jsonl: would be written inside the store, which this command reads (give the output "
              "another name)");
  }
  {
    OutputFiles outputs;
    outputs.claim("--out p", dir + "/p/page.md", make_parents);
    EXPECT_EQ(refusal([&] { outputs.reads("the store", dir + "/p"); }),
              "--out p: would be written inside the store, which this command reads (give the output another name)");
  }
  EXPECT_FALSE(fs::exists(dir + "/x"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace heapline
