// heapline/preload_check.h: will ld.so preload a library into a program?
// Judged as the kernel's execve decides it, for the interposer, the
// launcher and heapline-bench alike.
#include <heapline/preload_check.h>

#include <gtest/gtest.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>

namespace {

namespace fs = std::filesystem;
using heapline::preload_blocker_of;
using heapline::PreloadBlocker;

class PreloadCheck : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("heapline-preload-check-" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string script(const std::string& name, const std::string& first_line) {
    const std::string path = (dir_ / name).string();
    std::ofstream(path) << first_line << "\necho hello\n";
    fs::permissions(path, fs::perms::owner_all);
    return path;
  }
  std::string copy_of(const std::string& program, const std::string& name) {
    const std::string path = (dir_ / name).string();
    fs::copy_file(program, path);
    return path;
  }
  // Whether the kernel would grant a set-ID bit here (not a nosuid mount).
  bool set_id_granted() {
    struct statvfs filesystem {};
    return statvfs(dir_.c_str(), &filesystem) == 0 && (filesystem.f_flag & ST_NOSUID) == 0;
  }
  // Another user's set-user-ID copy of /bin/true; "" where this process
  // cannot make one (not root, or a nosuid mount).
  std::string set_uid_of_another_user(const std::string& name) {
    const std::string path = copy_of("/bin/true", name);
    if (getuid() != 0 || !set_id_granted() || chown(path.c_str(), 65534, 65534) != 0 || chmod(path.c_str(), 04755) != 0)
      return "";
    return path;
  }

  fs::path dir_;
};

TEST_F(PreloadCheck, ADynamicProgramTakesThePreload) {
  char decided_by[PATH_MAX];
  EXPECT_EQ(preload_blocker_of("/bin/true", decided_by, sizeof decided_by), PreloadBlocker::none);
  EXPECT_STREQ(decided_by, "/bin/true");
}

TEST_F(PreloadCheck, AStaticProgramHasNoLoader) {
  EXPECT_EQ(preload_blocker_of(STATIC_PROGRAM), PreloadBlocker::statically_linked);
}

TEST_F(PreloadCheck, NoSuchFileOrNotARegularFileIsMissing) {
  EXPECT_EQ(preload_blocker_of((dir_ / "none").c_str()), PreloadBlocker::missing);
  EXPECT_EQ(preload_blocker_of(dir_.c_str()), PreloadBlocker::missing);
}

TEST_F(PreloadCheck, AScriptIsJudgedByItsInterpreterAndSaysWhichDecided) {
  char decided_by[PATH_MAX];
  const std::string on_static = script("on-static", std::string("#!  ") + STATIC_PROGRAM + " -x");
  EXPECT_EQ(preload_blocker_of(on_static.c_str(), decided_by, sizeof decided_by), PreloadBlocker::statically_linked);
  EXPECT_STREQ(decided_by, STATIC_PROGRAM);
  const std::string on_shell = script("on-shell", "#!/bin/sh");
  EXPECT_EQ(preload_blocker_of(on_shell.c_str(), decided_by, sizeof decided_by), PreloadBlocker::none);
  EXPECT_STREQ(decided_by, "/bin/sh");
  // A script run by a script: the kernel follows the chain.
  const std::string chained = script("chained", "#!" + on_static);
  EXPECT_EQ(preload_blocker_of(chained.c_str(), decided_by, sizeof decided_by), PreloadBlocker::statically_linked);
  EXPECT_STREQ(decided_by, STATIC_PROGRAM);
  const std::string no_interpreter = script("no-interpreter", "#!" + (dir_ / "gone").string());
  EXPECT_EQ(preload_blocker_of(no_interpreter.c_str()), PreloadBlocker::missing);
}

TEST_F(PreloadCheck, AScriptThatRunsItselfEndsWithoutAVerdict) {
  const std::string path = (dir_ / "loop").string();
  std::ofstream(path) << "#!" << path << "\n";
  EXPECT_EQ(preload_blocker_of(path.c_str()), PreloadBlocker::none);
}

TEST_F(PreloadCheck, ASetIdBitOfThisUserChangesNothing) {
  const std::string own = copy_of("/bin/true", "own-setuid");
  ASSERT_EQ(chmod(own.c_str(), 06755), 0);
  EXPECT_EQ(preload_blocker_of(own.c_str()), PreloadBlocker::none);
}

TEST_F(PreloadCheck, AnotherUsersSetUserIdProgramRunsInSecureMode) {
  const std::string set_uid = set_uid_of_another_user("setuid-true");
  if (set_uid.empty()) GTEST_SKIP() << "needs root and a mount that grants set-ID bits";
  EXPECT_EQ(preload_blocker_of(set_uid.c_str()), PreloadBlocker::set_user_id);
}

// On a nosuid mount the kernel grants no set-ID bit: another user's
// set-user-ID program there runs as the caller, and takes the preload. (A
// tmpfs mounted nosuid in a mount namespace of this test's own process.)
TEST_F(PreloadCheck, ANosuidMountGrantsNoSetIdBit) {
  if (getuid() != 0 || unshare(CLONE_NEWNS) != 0 || mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0)
    GTEST_SKIP() << "needs root and a mount namespace of its own";
  const fs::path nosuid = dir_ / "nosuid";
  fs::create_directories(nosuid);
  ASSERT_EQ(mount("tmpfs", nosuid.c_str(), "tmpfs", MS_NOSUID, "size=4m"), 0) << std::strerror(errno);
  const std::string path = (nosuid / "setuid-true").string();
  fs::copy_file("/bin/true", path);
  ASSERT_EQ(chown(path.c_str(), 65534, 65534), 0);
  ASSERT_EQ(chmod(path.c_str(), 04755), 0);
  EXPECT_EQ(preload_blocker_of(path.c_str()), PreloadBlocker::none);
  umount2(nosuid.c_str(), MNT_DETACH);
}

TEST_F(PreloadCheck, AnotherGroupsSetGroupIdProgramRunsInSecureMode) {
  const std::string path = copy_of("/bin/true", "setgid-true");
  if (getuid() != 0 || !set_id_granted() || chown(path.c_str(), 0, 65534) != 0 || chmod(path.c_str(), 02755) != 0 ||
      getgid() == 65534)
    GTEST_SKIP() << "needs root and a mount that grants set-ID bits";
  EXPECT_EQ(preload_blocker_of(path.c_str()), PreloadBlocker::set_group_id);
}

// The kernel ignores the set-ID bits of a script (execve(2)): a set-user-ID
// script of another user still runs its interpreter as the caller.
TEST_F(PreloadCheck, ASetIdScriptIsJudgedByItsInterpreterOnly) {
  const std::string path = script("setuid-script", "#!/bin/sh");
  if (getuid() != 0 || !set_id_granted() || chown(path.c_str(), 65534, 65534) != 0 || chmod(path.c_str(), 04755) != 0)
    GTEST_SKIP() << "needs root and a mount that grants set-ID bits";
  EXPECT_EQ(preload_blocker_of(path.c_str()), PreloadBlocker::none);
  // ... and an interpreter that is set-user-ID decides.
  const std::string set_uid = set_uid_of_another_user("setuid-interpreter");
  const std::string on_set_uid = script("on-setuid", "#!" + set_uid);
  EXPECT_EQ(preload_blocker_of(on_set_uid.c_str()), PreloadBlocker::set_user_id);
}

// File capabilities put a program of an ordinary user in secure mode; the
// root user gains nothing from them that it had not.
TEST_F(PreloadCheck, FileCapabilitiesCountForAnOrdinaryUserOnly) {
  const std::string path = copy_of("/bin/true", "capable-true");
  // A version-2 capability set granting CAP_NET_RAW (13), effective.
  const unsigned char capability[20] = {0x01, 0x00, 0x00, 0x02, 0x00, 0x20, 0x00, 0x00};
  if (getuid() != 0 || !set_id_granted() ||
      setxattr(path.c_str(), "security.capability", capability, sizeof capability, 0) != 0)
    GTEST_SKIP() << "needs root, a mount that grants capabilities and security xattrs";
  EXPECT_EQ(preload_blocker_of(path.c_str()), PreloadBlocker::none) << "the real user is root";
  // The same file, judged by a process of an ordinary user.
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    if (setgid(65534) != 0 || setuid(65534) != 0) _exit(100);
    _exit(static_cast<int>(preload_blocker_of(path.c_str())));
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_NE(WEXITSTATUS(status), 100) << "could not become an ordinary user";
  EXPECT_EQ(WEXITSTATUS(status), static_cast<int>(PreloadBlocker::file_capabilities));
}

}  // namespace
