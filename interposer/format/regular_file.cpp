#include "heapline/regular_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include <heapline/file_kind.h>

namespace heapline {

const char* file_kind_text(unsigned mode) { return file_kind_name(mode); }

RegularFile RegularFile::open(const std::string& path) {
  RegularFile file;
  file.path_ = path;
  // Looked at before it is opened: opening a device can act on it (a tape
  // rewinds, a terminal becomes the controlling one), and a FIFO is never
  // opened at all. The type is checked again on the descriptor below, for
  // a name swapped in between.
  struct stat named {};
  if (::stat(path.c_str(), &named) != 0) {
    file.error_ = path + ": " + std::strerror(errno);
    return file;
  }
  if (!S_ISREG(named.st_mode)) {
    file.error_ = path + " is " + file_kind_text(named.st_mode) + ", not a regular file";
    return file;
  }
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
  if (fd < 0) {
    file.error_ = path + ": " + std::strerror(errno);
    return file;
  }
  struct stat info {};
  if (::fstat(fd, &info) != 0) {
    file.error_ = path + ": " + std::strerror(errno);
    ::close(fd);
    return file;
  }
  if (!S_ISREG(info.st_mode)) {
    file.error_ = path + " is " + file_kind_text(info.st_mode) + ", not a regular file";
    ::close(fd);
    return file;
  }
  // A regular file never blocks; clear the flag so reads behave as usual.
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  file.fd_ = fd;
  file.size_ = static_cast<std::size_t>(info.st_size);
  return file;
}

RegularFile::RegularFile(RegularFile&& other) noexcept
    : path_(std::move(other.path_)), error_(std::move(other.error_)), fd_(std::exchange(other.fd_, -1)),
      size_(other.size_) {}

RegularFile& RegularFile::operator=(RegularFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    path_ = std::move(other.path_);
    error_ = std::move(other.error_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = other.size_;
  }
  return *this;
}

int RegularFile::release() {
  size_ = 0;
  return std::exchange(fd_, -1);
}

RegularFile::~RegularFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::string RegularFile::read_all(std::size_t limit, std::string& error) const {
  error.clear();
  if (fd_ < 0) {
    error = error_;
    return {};
  }
  if (size_ > limit) {
    error = path_ + " is too large (" + std::to_string(size_) + " bytes; at most " + std::to_string(limit) + ")";
    return {};
  }
  std::string content;
  char buffer[65536];
  for (;;) {
    const ssize_t got = ::pread(fd_, buffer, sizeof buffer, static_cast<off_t>(content.size()));
    if (got < 0) {
      if (errno == EINTR) continue;
      error = path_ + ": " + std::strerror(errno);
      return {};
    }
    if (got == 0) break;
    content.append(buffer, static_cast<std::size_t>(got));
    if (content.size() > limit) {  // grew while being read
      error = path_ + " is too large (more than " + std::to_string(limit) + " bytes)";
      return {};
    }
  }
  return content;
}

}  // namespace heapline
