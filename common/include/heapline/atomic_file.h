// A file written for readers whole or not at all: to a temporary name of its
// own beside it (two writers into one directory never share one), then
// renamed into place, so a reader running at the same time never sees half
// of it. Used by heapline-bench (the page, the comparison) and the
// launcher (exported profiles).
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace heapline {

// Creates the parent directory if needed; throws std::runtime_error naming
// the path and the reason when the file cannot be written.
inline void write_file_atomically(const std::string& path, const std::string& text) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw std::runtime_error("cannot create " + parent.string() + ": " + ec.message());
  }
  std::string temporary = path + ".XXXXXX";
  const int fd = mkstemp(temporary.data());
  if (fd < 0) throw std::runtime_error("cannot create a temporary file beside " + path + ": " + std::strerror(errno));
  std::size_t written = 0;
  while (written < text.size()) {
    const ssize_t n = write(fd, text.data() + written, text.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      close(fd);
      unlink(temporary.c_str());
      throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(error));
    }
    written += static_cast<std::size_t>(n);
  }
  // mkstemp makes the file 0600; what is written here is for every reader.
  fchmod(fd, 0644);
  if (close(fd) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    throw std::runtime_error("cannot write " + temporary + ": " + std::strerror(error));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + std::strerror(error));
  }
}

}  // namespace heapline
