#include "heapline_bench/reports/atomic_file.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <cstdio>
#include <sys/stat.h>
#include <unistd.h>
#include <stdexcept>

namespace heapline::bench {

void write_file_atomically(const std::string& path, const std::string& text) {
  const auto parent = std::filesystem::path(path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) throw std::runtime_error("cannot create " + parent.string() + ": " + ec.message());
  }
  // A name of its own: two renders into one directory must not share (and
  // rename away) each other's temporary file.
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
  // mkstemp makes the file 0600; the page is for every reader.
  fchmod(fd, 0644);
  close(fd);
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    const int error = errno;
    unlink(temporary.c_str());
    throw std::runtime_error("cannot rename " + temporary + " to " + path + ": " + std::strerror(error));
  }
}

}  // namespace heapline::bench
