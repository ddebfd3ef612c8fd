#include "os.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <cerrno>
#include <cstring>

#include "text.h"

namespace heapline::os {

namespace {

// The signals a write can raise in the writing thread: SIGXFSZ (past the
// file size limit) and SIGPIPE (a pipe with no reader). Blocked for the
// scope of one of the library's writes; one that the writes raised is taken
// back (sigtimedwait with no wait) before the thread's mask is restored, so
// neither the host's handler nor its default action (death) ever sees it. A
// signal already pending before is left pending: it is the host's.
constexpr int kWriteSignals[] = {SIGXFSZ, SIGPIPE};

class WriteSignalsKept {
 public:
  WriteSignalsKept() {
    sigemptyset(&guarded_);
    for (int signal_number : kWriteSignals) sigaddset(&guarded_, signal_number);
    pthread_sigmask(SIG_BLOCK, &guarded_, &mask_);
    sigpending(&pending_before_);
  }
  ~WriteSignalsKept() {
    sigset_t pending;
    sigpending(&pending);
    for (int signal_number : kWriteSignals) {
      if (sigismember(&pending, signal_number) == 1 && sigismember(&pending_before_, signal_number) != 1) {
        sigset_t one;
        sigemptyset(&one);
        sigaddset(&one, signal_number);
        const timespec no_wait{};
        sigtimedwait(&one, nullptr, &no_wait);
      }
    }
    pthread_sigmask(SIG_SETMASK, &mask_, nullptr);
  }
  WriteSignalsKept(const WriteSignalsKept&) = delete;
  WriteSignalsKept& operator=(const WriteSignalsKept&) = delete;

 private:
  sigset_t guarded_;
  sigset_t mask_;
  sigset_t pending_before_;
};

}  // namespace

int create_file(const char* path, int access) {
  const int fd = ::open(path, access | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) return -1;
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || info.st_nlink != 1) {
    ::close(fd);
    errno = EPERM;
    return -1;
  }
  return fd;
}

int create_temp_file(const char* final_path, int pid, int access, char* temp_path, std::size_t capacity) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    TextSink name(temp_path, capacity);
    name.append(final_path);
    name.append('.');
    name.append_signed(pid);
    if (attempt > 0) {
      static const char kHex[] = "0123456789abcdef";
      char random[17];
      std::uint64_t bits = random_bits();
      for (int i = 0; i < 16; ++i, bits >>= 4) random[i] = kHex[bits & 15];
      name.append('.');
      name.append(random, 16);
    }
    name.append(".tmp");
    name.c_str();
    if (name.truncated()) {
      errno = ENAMETOOLONG;
      return -1;
    }
    const int fd = create_file(temp_path, access);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  return -1;
}

std::uint64_t file_size_limit() {
  rlimit limit;
  if (::getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return UINT64_MAX;
  return static_cast<std::uint64_t>(limit.rlim_cur);
}

int write_all(int fd, const void* data, std::size_t size, std::uint64_t* file_size) {
  const int saved_errno = errno;
  if (file_size != nullptr) {
    const std::uint64_t limit = file_size_limit();
    if (*file_size > limit || size > limit - *file_size) return EFBIG;
  }
  int error = 0;
  {
    WriteSignalsKept kept;
    const char* next = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t written = ::write(fd, next, size);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) {
        error = written < 0 ? errno : ENOSPC;
        break;
      }
      next += written;
      size -= static_cast<std::size_t>(written);
      if (file_size != nullptr) *file_size += static_cast<std::uint64_t>(written);
    }
  }
  errno = saved_errno;
  return error;
}

int rename_new(const char* from, const char* to) {
  const int saved_errno = errno;
  int result = 0;
  if (::renameat2(AT_FDCWD, from, AT_FDCWD, to, RENAME_NOREPLACE) != 0) {
    result = errno;
    if (result == EINVAL || result == ENOSYS || result == EOPNOTSUPP) {
      // No RENAME_NOREPLACE here: a hard link is just as exclusive.
      result = ::link(from, to) == 0 ? 0 : errno;
      if (result == 0) ::unlink(from);
    }
  }
  errno = saved_errno;
  return result;
}

int exchange_names(const char* a, const char* b) {
  const int saved_errno = errno;
  const int result = ::renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE) == 0 ? 0 : errno;
  errno = saved_errno;
  return result;
}

bool file_id(const char* path, FileId* id) {
  const int saved_errno = errno;
  struct stat info;
  const bool found = ::lstat(path, &info) == 0;
  if (found) *id = FileId{info.st_dev, info.st_ino};
  errno = saved_errno;
  return found;
}

bool file_id(int fd, FileId* id) {
  const int saved_errno = errno;
  struct stat info;
  const bool found = ::fstat(fd, &info) == 0;
  if (found) *id = FileId{info.st_dev, info.st_ino};
  errno = saved_errno;
  return found;
}

std::uint64_t process_start_ticks(int pid) {
  const int saved_errno = errno;
  char path[48];
  TextSink name(path, sizeof path);
  name.append("/proc/");
  name.append_signed(pid);
  name.append("/stat");
  const int fd = ::open(name.c_str(), O_RDONLY | O_CLOEXEC);
  std::uint64_t ticks = 0;
  if (fd >= 0) {
    char text[1024];
    const ssize_t length = ::read(fd, text, sizeof text - 1);
    ::close(fd);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses, so
    // the fields are counted from its last ')'.
    const char* p =
        length > 0 ? static_cast<const char*>(memrchr(text, ')', static_cast<std::size_t>(length))) : nullptr;
    if (p != nullptr) {
      text[length] = 0;
      int field = 2;
      for (; *p != 0 && field < 22; ++p) {
        if (*p == ' ') ++field;
      }
      for (; field == 22 && *p >= '0' && *p <= '9'; ++p) ticks = ticks * 10 + static_cast<std::uint64_t>(*p - '0');
    }
  }
  errno = saved_errno;
  return ticks;
}

bool process_exists(int pid) {
  const int saved_errno = errno;
  const bool exists = pid > 0 && (::kill(pid, 0) == 0 || errno == EPERM);
  errno = saved_errno;
  return exists;
}

bool secure_mode() {
  const int saved_errno = errno;
  const bool secure = ::getauxval(AT_SECURE) != 0;
  errno = saved_errno;
  return secure;
}

std::uint64_t random_bits() {
  const int saved_errno = errno;
  std::uint64_t bits = 0;
  if (::getrandom(&bits, sizeof bits, GRND_NONBLOCK) != static_cast<ssize_t>(sizeof bits)) {
    bits = clock_ns(CLOCK_MONOTONIC) ^ (static_cast<std::uint64_t>(::getpid()) << 40) ^
           reinterpret_cast<std::uintptr_t>(&bits);
  }
  errno = saved_errno;
  return bits;
}

}  // namespace heapline::os
