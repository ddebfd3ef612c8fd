// The library's OS boundary (os.h): the one file-creation helper never opens
// what was there, its writes never raise a signal, and the resident set is
// read without keeping a descriptor or touching errno.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sched.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <regex>
#include <string>
#include <utility>

#include "os.h"
#include "process_runner.h"

namespace fs = std::filesystem;

namespace heapline {
namespace {

std::string contents(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

class Os : public test::TempDirTest {
 protected:
  Os() : TempDirTest("os") {}
  void SetUp() override {
    TempDirTest::SetUp();
    std::ofstream(dir_ / "victim") << "precious\n";
  }
  // Puts each kind of thing a name can already hold at `path`.
  void plant(const std::string& kind, const fs::path& path) {
    if (kind == "file") {
      std::ofstream(path) << "planted\n";
      if (geteuid() == 0) {
        ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);  // another user's
      }
    } else if (kind == "link") {
      fs::create_symlink(dir_ / "victim", path);
    } else if (kind == "dangling link") {
      fs::create_symlink(dir_ / "nowhere", path);
    } else if (kind == "fifo") {
      ASSERT_EQ(mkfifo(path.c_str(), 0600), 0);
    } else if (kind == "directory") {
      fs::create_directory(path);
    }
  }
};

const char* const kKinds[] = {"file", "link", "dangling link", "fifo", "directory"};

TEST_F(Os, CreateFileNeverOpensWhatIsThere) {
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const fs::path path = dir_ / (std::string("name-") + kind);
    plant(kind, path);
    errno = 0;
    EXPECT_EQ(os::create_file(path.c_str(), O_WRONLY), -1);
    EXPECT_EQ(errno, EEXIST);
    EXPECT_FALSE(fs::exists(dir_ / "nowhere"));
  }
  EXPECT_EQ(contents(dir_ / "victim"), "precious\n");
  const int fd = os::create_file((dir_ / "fresh").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  struct stat info {};
  ASSERT_EQ(fstat(fd, &info), 0);
  EXPECT_EQ(info.st_uid, geteuid());
  close(fd);
}

TEST_F(Os, ATemporaryNameTakenAlreadyGivesAnother) {
  for (const char* kind : kKinds) {
    SCOPED_TRACE(kind);
    const fs::path final_path = dir_ / (std::string("r-") + kind + ".json");
    const fs::path first = final_path.string() + ".4242.tmp";
    plant(kind, first);
    char temp[4200];
    const int fd = os::create_temp_file(final_path.c_str(), 4242, O_WRONLY, temp, sizeof temp);
    ASSERT_GE(fd, 0);
    close(fd);
    EXPECT_NE(fs::path(temp), first);
    EXPECT_TRUE(std::regex_match(std::string(temp), std::regex(R"(.*\.json\.4242\.[0-9a-f]{16}\.tmp)"))) << temp;
    if (std::string(kind) == "file") {
      EXPECT_EQ(contents(first), "planted\n");
    }
  }
  EXPECT_EQ(contents(dir_ / "victim"), "precious\n");
}

TEST_F(Os, RenameNewNeverReplaces) {
  std::ofstream(dir_ / "a") << "a\n";
  std::ofstream(dir_ / "b") << "b\n";
  EXPECT_EQ(os::rename_new((dir_ / "a").c_str(), (dir_ / "b").c_str()), EEXIST);
  EXPECT_EQ(contents(dir_ / "b"), "b\n");
  EXPECT_EQ(os::rename_new((dir_ / "a").c_str(), (dir_ / "c").c_str()), 0);
  EXPECT_EQ(contents(dir_ / "c"), "a\n");
  EXPECT_FALSE(fs::exists(dir_ / "a"));
}

// Past the file size limit a write is refused before it is made (EFBIG),
// and a write to a pipe without a reader returns EPIPE: neither signal
// reaches the process, whose own disposition stays the default (death).
TEST_F(Os, WritesNeverRaiseASignal) {
  rlimit old_limit{};
  getrlimit(RLIMIT_FSIZE, &old_limit);
  rlimit limit = old_limit;
  limit.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
  const int fd = os::create_file((dir_ / "limited").c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  const std::string block(3000, 'x');
  std::uint64_t size = 0;
  EXPECT_EQ(os::write_all(fd, block.data(), block.size(), &size), 0);
  errno = 1234;
  EXPECT_EQ(os::write_all(fd, block.data(), block.size(), &size), EFBIG);
  EXPECT_EQ(errno, 1234);
  EXPECT_EQ(size, 3000u);
  // Unchecked by size (a stream): the kernel writes up to the limit, then
  // refuses and raises SIGXFSZ, which is taken back.
  EXPECT_EQ(os::write_all(fd, block.data(), block.size(), nullptr), EFBIG);
  EXPECT_EQ(fs::file_size(dir_ / "limited"), 4096u);
  close(fd);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &old_limit), 0);

  int pipe_ends[2];
  ASSERT_EQ(pipe(pipe_ends), 0);
  close(pipe_ends[0]);
  EXPECT_EQ(os::write_all(pipe_ends[1], "x", 1, nullptr), EPIPE);
  close(pipe_ends[1]);
  sigset_t pending;
  sigpending(&pending);
  EXPECT_EQ(sigismember(&pending, SIGXFSZ), 0);
  EXPECT_EQ(sigismember(&pending, SIGPIPE), 0);
}

// read_at reads all it was asked for, across reads that return less: a
// /proc file made by seq_file gives at most a page per read, as a slow or
// remote file system may. The bytes land in order, inside the buffer only.
TEST(OsFile, ReadAtGathersShortReadsInOrder) {
  const char* path = "/proc/kallsyms";  // megabytes, a page per read, the same on every read
  std::ifstream whole(path, std::ios::binary);
  std::string expected(64 * 1024, '\0');
  if (!whole.read(expected.data(), static_cast<std::streamsize>(expected.size())))
    GTEST_SKIP() << path << " is not readable here";
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char probe[8192];
  ASSERT_LT(::pread(fd, probe, sizeof probe, 0), static_cast<ssize_t>(sizeof probe)) << "no short read to gather";
  std::string buffer(3 * expected.size(), '\0');  // guards on both sides
  errno = EDOM;
  EXPECT_TRUE(os::read_at(fd, buffer.data() + expected.size(), expected.size(), 0));
  EXPECT_EQ(errno, EDOM);
  EXPECT_TRUE(buffer.substr(expected.size(), expected.size()) == expected);
  EXPECT_EQ(buffer.find_first_not_of('\0'), expected.size());
  EXPECT_LT(buffer.find_last_not_of('\0'), 2 * expected.size());
  ::close(fd);
}

// A file shorter than asked: what it has, and false (a live file cut short
// is not taken for a whole one).
TEST_F(Os, ReadAtPastTheEndIsNotWhole) {
  std::ofstream(dir_ / "short") << "0123456789";
  const int fd = ::open((dir_ / "short").c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  char out[20] = {};
  EXPECT_FALSE(os::read_at(fd, out, sizeof out, 0));
  EXPECT_EQ(std::string(out), "0123456789");
  EXPECT_TRUE(os::read_at(fd, out, 4, 6));
  EXPECT_EQ(std::string(out, 4), "6789");
  ::close(fd);
}

// A guarded mapping whose file another process cut: settled without a
// fault (nothing of it read first), it says from where the pages are the
// anonymous memory that replaced them, and every page reads, the file's
// bytes below the cut and zeros past it. Without a cut, the whole length.
TEST_F(Os, SettlingACutMappingReplacesItsPagesPastTheEndAtOnce) {
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const fs::path path = dir_ / "guarded";
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(4 * page)), 0);
  auto* mapping = static_cast<char*>(mmap(nullptr, 4 * page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
  ASSERT_NE(mapping, MAP_FAILED);
  std::memset(mapping, 'x', 4 * page);
  EXPECT_EQ(os::settle_cut_mapping(), SIZE_MAX);  // nothing guarded
  os::guard_cut_mapping(mapping, 4 * page - 10);
  EXPECT_EQ(os::settle_cut_mapping(), 4 * page);
  EXPECT_FALSE(os::cut_mapping_seen());
  // Cut into its second page: the first two pages stay the file's.
  ASSERT_EQ(::ftruncate(fd, static_cast<off_t>(page + 10)), 0);
  EXPECT_EQ(os::settle_cut_mapping(), 2 * page);
  EXPECT_TRUE(os::cut_mapping_seen());  // replaced by the settling, not by a fault
  EXPECT_EQ(mapping[0], 'x');
  EXPECT_EQ(mapping[page + 9], 'x');
  EXPECT_EQ(mapping[page + 10], 0);  // the file's last page, zeroed past its end by the kernel
  EXPECT_EQ(mapping[2 * page], 0);
  EXPECT_EQ(mapping[4 * page - 1], 0);
  // Cut again, to nothing: the pages replaced before stay replaced.
  ASSERT_EQ(::ftruncate(fd, 0), 0);
  EXPECT_EQ(os::settle_cut_mapping(), 0u);
  EXPECT_EQ(mapping[0], 0);
  os::unguard_cut_mapping();
  EXPECT_EQ(os::settle_cut_mapping(), SIZE_MAX);
  munmap(mapping, 4 * page);
  ::close(fd);
}

TEST(OsProcess, StartTicksNameAProcess) {
  EXPECT_GT(os::process_start_ticks(getpid()), 0u);
  EXPECT_EQ(os::process_start_ticks(getpid()), os::process_start_ticks(getpid()));
  EXPECT_EQ(os::process_start_ticks(-5), 0u);
  EXPECT_TRUE(os::process_exists(getpid()));
  EXPECT_FALSE(os::process_exists(0));
}

// The resident set now: pages mapped count once written, and the file it
// reads leaves no descriptor behind (the next one the process gets is the
// same before and after a hundred readings).
TEST(OsProcess, ResidentBytesCountWrittenPagesAndKeepNoDescriptor) {
  const int next_fd = dup(0);
  ASSERT_GE(next_fd, 0);
  close(next_fd);
  const std::int64_t before = os::resident_bytes();
  ASSERT_GT(before, 0);
  EXPECT_EQ(before % static_cast<std::int64_t>(sysconf(_SC_PAGESIZE)), 0);
  constexpr std::size_t kBlock = std::size_t{32} << 20;
  void* block = mmap(nullptr, kBlock, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  const std::int64_t mapped = os::resident_bytes();
  EXPECT_LT(mapped, before + (std::int64_t{8} << 20));  // mapped, not written: not resident
  std::memset(block, 1, kBlock);
  const std::int64_t written = os::resident_bytes();
  EXPECT_GE(written, mapped + static_cast<std::int64_t>(kBlock) - (std::int64_t{1} << 20));
  munmap(block, kBlock);
  for (int i = 0; i < 100; ++i) ASSERT_GT(os::resident_bytes(), 0);
  const int after_fd = dup(0);
  EXPECT_EQ(after_fd, next_fd);
  close(after_fd);
}

// With no descriptor left (EMFILE), and for a file that is not there, the
// reading says it does not know, and errno is the caller's.
TEST(OsProcess, AResidentReadingThatCannotOpenSaysSoAndKeepsErrno) {
  char text[16] = "untouched";
  errno = 4321;
  EXPECT_EQ(os::read_small_file("/proc/self/no-such-file", text, sizeof text), -1);
  EXPECT_EQ(errno, 4321);
  EXPECT_STREQ(text, "");
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &old_limit), 0);
  const int next_fd = dup(0);
  ASSERT_GE(next_fd, 0);
  close(next_fd);
  rlimit limit = old_limit;
  limit.rlim_cur = static_cast<rlim_t>(next_fd);  // no descriptor can be made
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &limit), 0);
  errno = 4321;
  const std::int64_t resident = os::resident_bytes();
  const int error = errno;
  ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &old_limit), 0);
  EXPECT_EQ(resident, -1);
  EXPECT_EQ(error, 4321);
}

// os.h's contract is that every call keeps the caller's errno unless it
// says otherwise (create_file, create_temp_file, open_to_read and the execs
// set it): the library runs inside the host's calls, and a host that reads
// errno after its own malloc or mmap must find its own. Each call is made
// to fail here (and, where it can, to succeed), with errno set to a value
// no call of its own would leave.
TEST_F(Os, EveryCallKeepsTheCallersErrnoUnlessItSaysOtherwise) {
  const std::string missing = (dir_ / "missing").string();
  const std::string victim = (dir_ / "victim").string();
  std::ofstream(dir_ / "other") << "other\n";
  const std::string other = (dir_ / "other").string();
  const int no_fd = 1 << 20;  // never open
  char text[64];
  os::FileId id;
  os::FileStatus status;
  int error = 0;
  const std::pair<const char*, std::function<void()>> calls[] = {
      {"file_size_limit", [] { os::file_size_limit(); }},
      {"rename_new onto a name taken", [&] { EXPECT_EQ(os::rename_new(other.c_str(), victim.c_str()), EEXIST); }},
      {"rename_new from nothing", [&] { EXPECT_EQ(os::rename_new(missing.c_str(), (dir_ / "x").c_str()), ENOENT); }},
      {"exchange_names with nothing",
       [&] { EXPECT_NE(os::exchange_names(missing.c_str(), victim.c_str()), 0); }},
      {"exchange_names", [&] { os::exchange_names(other.c_str(), victim.c_str()); }},
      {"file_id of nothing", [&] { EXPECT_FALSE(os::file_id(missing.c_str(), &id)); }},
      {"file_id of a closed descriptor", [&] { EXPECT_FALSE(os::file_id(no_fd, &id)); }},
      {"read_at a closed descriptor", [&] { EXPECT_FALSE(os::read_at(no_fd, text, sizeof text, 0)); }},
      {"close_file a closed descriptor", [&] { EXPECT_EQ(os::close_file(no_fd), EBADF); }},
      {"remove_name of nothing", [&] { EXPECT_EQ(os::remove_name(missing.c_str()), ENOENT); }},
      {"replace_name from nothing",
       [&] { EXPECT_EQ(os::replace_name(missing.c_str(), victim.c_str()), ENOENT); }},
      {"file_status of a closed descriptor", [&] { EXPECT_FALSE(os::file_status(no_fd, &status)); }},
      {"path_kind of nothing", [&] { EXPECT_EQ(os::path_kind(missing.c_str(), &error), os::PathKind::kNothing); }},
      {"path_kind under a file",
       [&] { EXPECT_EQ(os::path_kind((victim + "/x").c_str(), &error), os::PathKind::kUnknown); }},
      {"executable_file of nothing", [&] { EXPECT_FALSE(os::executable_file(missing.c_str())); }},
      {"executable_file of a file without x", [&] { EXPECT_FALSE(os::executable_file(victim.c_str())); }},
      {"why_loader_skips of nothing", [&] { os::why_loader_skips(missing.c_str()); }},
      {"program_path into too little", [&] { os::program_path(text, 2); }},
      {"working_directory into too little", [&] { os::working_directory(text, 2); }},
      {"process_start_ticks of no process", [] { EXPECT_EQ(os::process_start_ticks(-5), 0u); }},
      {"process_exists of no process", [] { EXPECT_FALSE(os::process_exists(-2147483647)); }},
      {"peak_resident_bytes", [] { os::peak_resident_bytes(); }},
      {"read_small_file of nothing", [&] { EXPECT_EQ(os::read_small_file(missing.c_str(), text, sizeof text), -1); }},
      {"clock_resolution_ns of no clock", [] { os::clock_resolution_ns(static_cast<clockid_t>(-1000)); }},
      {"secure_mode", [] { os::secure_mode(); }},
      {"random_bits", [] { os::random_bits(); }},
      {"wipe_on_fork of no mapping", [] { EXPECT_FALSE(os::wipe_on_fork(nullptr, 4096)); }},
  };
  for (const auto& [what, call] : calls) {
    SCOPED_TRACE(what);
    errno = 4321;
    call();
    EXPECT_EQ(errno, 4321);
  }
}

// The page the library's identity word lives in (process.h): a copy made
// without CLONE_VM finds it zeroed, a child in the same memory finds it as
// it is. The identity check depends on this kernel behaviour (Linux 4.14).
TEST(OsIdentity, AWipeOnForkPageIsZeroInACopyAndIntactInSharedMemory) {
  const long page = sysconf(_SC_PAGESIZE);
  void* mapped = mmap(nullptr, static_cast<std::size_t>(page), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* word = static_cast<volatile int*>(mapped);
  ASSERT_TRUE(os::wipe_on_fork(mapped, static_cast<std::size_t>(page)));
  *word = 1234;
  auto child_sees = [&](int flags) {
    static char stack[64 * 1024] __attribute__((aligned(16)));
    struct Arguments {
      volatile int* word;
    } arguments{word};
    const pid_t child = clone([](void* data) -> int { return *static_cast<Arguments*>(data)->word == 1234 ? 1 : 0; },
                              stack + sizeof stack, flags | SIGCHLD, &arguments);
    int status = -1;
    EXPECT_EQ(waitpid(child, &status, 0), child);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(child_sees(0), 0);                         // a copy: wiped
  EXPECT_EQ(child_sees(CLONE_VM | CLONE_VFORK), 1);    // the same memory
  EXPECT_EQ(*word, 1234);
  munmap(mapped, static_cast<std::size_t>(page));
}

}  // namespace
}  // namespace heapline
