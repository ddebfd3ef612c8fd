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
  const OutputRules make_parents{.made_directories = 1};
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

// A missing directory on the way to an output is refused, in one line that
// names it, and nothing is made; only the directories the command makes
// itself (made_directories: the output directory it was asked for, its
// own below it) are made, one level each, in a directory that exists.
// export --out nodir/sub/x.csv made nodir and nodir/sub (as root, --out
// /nonexistent/x.csv made /nonexistent).
TEST(OutputFiles, AMissingDirectoryIsRefusedNotMade) {
  char dir_template[] = "/tmp/output-file-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  auto refusal = [](auto&& write) {
    try {
      write();
    } catch (const OutputRefused& refused) {
      return std::string(refused.what());
    }
    return std::string("not refused");
  };
  EXPECT_EQ(refusal([&] { write_output_file(dir + "/nodir/sub/x.csv", "x"); }),
            dir + "/nodir/sub/x.csv: " + dir + "/nodir/sub: No such file or directory");
  EXPECT_EQ(refusal([&] { write_output_file(dir + "/nodir/x.csv", "x"); }),
            dir + "/nodir/x.csv: " + dir + "/nodir: No such file or directory");
  // render --out nodir/sub: the page's directory (sub) is made, not nodir.
  EXPECT_EQ(refusal([&] { write_output_file(dir + "/nodir/sub/page.md", "x", {.made_directories = 1}); }),
            dir + "/nodir/sub/page.md: " + dir + "/nodir: No such file or directory");
  EXPECT_EQ(refusal([&] { write_output_file(dir + "/nodir/sub/plots/p.svg", "x", {.made_directories = 2}); }),
            dir + "/nodir/sub/plots/p.svg: " + dir + "/nodir: No such file or directory");
  EXPECT_FALSE(fs::exists(dir + "/nodir"));
  // What the command makes, in a directory that exists, is made.
  write_output_file(dir + "/page/plots/p.svg", "x", {.made_directories = 2, .own_directories = 1});
  write_output_file(dir + "/page/index.md", "x", {.made_directories = 1});
  EXPECT_TRUE(fs::is_regular_file(dir + "/page/plots/p.svg"));
  EXPECT_TRUE(fs::is_regular_file(dir + "/page/index.md"));
  fs::remove_all(dir);
}

// A directory on the way that is a symbolic link to nothing is said as
// such, whichever writer meets it: "cannot create rlink/plots: File
// exists" named a directory that does not exist, and mkdir at the link
// failed with "File exists".
TEST(OutputFiles, ASymbolicLinkToNothingOnTheWayIsSaidAsSuch) {
  char dir_template[] = "/tmp/output-file-XXXXXX";
  ASSERT_NE(::mkdtemp(dir_template), nullptr);
  const std::string dir = dir_template;
  const std::string link = dir + "/rlink";
  ASSERT_EQ(::symlink((dir + "/no_such_target").c_str(), link.c_str()), 0);
  const std::string said = link + " is a symbolic link to " + dir + "/no_such_target, which does not exist";
  EXPECT_EQ(output_problem(link + "/x.csv"), said);
  EXPECT_EQ(output_problem(link + "/sub/page.md", {.made_directories = 1}), said);
  EXPECT_EQ(output_problem(link + "/page.md", {.made_directories = 1}), said);
  EXPECT_EQ(output_problem(link + "/plots/p.svg", {.made_directories = 2, .own_directories = 1}), said);
  EXPECT_FALSE(fs::exists(dir + "/no_such_target"));
  fs::remove_all(dir);
}

}  // namespace
}  // namespace heapline
