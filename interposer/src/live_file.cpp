#include "live_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace heapline {

namespace {

// Written into the file to give it real blocks: ftruncate alone would make a
// sparse file, and a store into a hole of a full disk raises SIGBUS in the
// host. Static: the first malloc call may run on a small stack.
constinit const char kZeros[16384] = {};

}  // namespace

LiveRegion* create_live_region(const char* path) {
  // O_EXCL: never a file someone else made (another process of the run, or
  // another user in a shared directory, who could still write to it).
  int fd = ::open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd < 0) return nullptr;
  struct stat info;
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) || info.st_uid != ::geteuid() || info.st_nlink != 1) {
    ::close(fd);
    errno = EPERM;
    return nullptr;
  }
  std::size_t left = sizeof(LiveRegion);
  while (left > 0) {
    ssize_t written = ::write(fd, kZeros, left < sizeof kZeros ? left : sizeof kZeros);
    if (written < 0 && errno == EINTR) continue;
    if (written <= 0) {
      int error = written < 0 ? errno : ENOSPC;
      ::close(fd);
      ::unlink(path);
      errno = error;
      return nullptr;
    }
    left -= static_cast<std::size_t>(written);
  }
  void* address = ::mmap(nullptr, sizeof(LiveRegion), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int error = errno;
  ::close(fd);
  if (address == MAP_FAILED) {
    ::unlink(path);
    errno = error;
    return nullptr;
  }
  return static_cast<LiveRegion*>(address);
}

void release_live_region(LiveRegion* region) {
  if (region != nullptr) ::munmap(region, sizeof(LiveRegion));
}

}  // namespace heapline
