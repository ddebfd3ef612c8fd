#include "heapline_bench/history/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace heapline::bench {
namespace {

std::runtime_error store_error(const std::string& what, const std::string& path) {
  return std::runtime_error("cannot " + what + " " + path + ": " + std::strerror(errno));
}

class LockedAppendFile {
 public:
  explicit LockedAppendFile(const std::string& path) : path_(path) {
    fd_ = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);  // read: the last byte
    if (fd_ < 0) throw store_error("open", path);
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        close(fd_);
        throw store_error("lock", path);
      }
    }
  }
  ~LockedAppendFile() { close(fd_); }  // closing releases the lock

  // True when the file is non-empty and its last byte is not a newline: an
  // earlier writer died mid-line.
  bool ends_mid_line() const {
    struct stat st {};
    if (fstat(fd_, &st) != 0 || st.st_size == 0) return false;
    char last = '\n';
    return pread(fd_, &last, 1, st.st_size - 1) == 1 && last != '\n';
  }

  void write_all_once(const std::string& bytes) {
    // One write: a regular file takes it whole or fails (ENOSPC, EFBIG).
    ssize_t written;
    do {
      written = write(fd_, bytes.data(), bytes.size());
    } while (written < 0 && errno == EINTR);
    if (written < 0) throw store_error("append to", path_);
    if (static_cast<std::size_t>(written) != bytes.size()) {
      errno = ENOSPC;
      throw store_error("append a whole line to", path_);
    }
    if (fsync(fd_) != 0) throw store_error("fsync", path_);
  }

 private:
  std::string path_;
  int fd_ = -1;
};

}  // namespace

Store::Store(std::string directory) : directory_(std::move(directory)) {}

std::string Store::points_path() const { return directory_ + "/points.jsonl"; }

void Store::append(const Point& point) const { append(std::vector<Point>{point}); }

void Store::append(const std::vector<Point>& points) const {
  std::string lines;
  for (const auto& point : points) lines += to_json(point).dump() + "\n";
  append_lines(points_path(), lines);
}

std::string Store::calibration_path() const { return directory_ + "/calibration.jsonl"; }

void Store::append_lines(const std::string& path, std::string lines) const {
  std::error_code ec;
  std::filesystem::create_directories(directory_, ec);
  if (ec) throw std::runtime_error("cannot create the store directory " + directory_ + ": " + ec.message());
  LockedAppendFile file(path);
  // Never glue a point to a torn line: start a new one, and leave the torn
  // line as it is for readers to report.
  if (file.ends_mid_line()) lines.insert(lines.begin(), '\n');
  file.write_all_once(lines);
}

StoreContents Store::read() const { return read_points_file(points_path(), RawTimes::read); }

}  // namespace heapline::bench
