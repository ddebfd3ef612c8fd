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
#include <set>
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

  // The whole file, read under the lock.
  std::string contents() const {
    std::string text;
    char buffer[1 << 16];
    off_t at = 0;
    for (;;) {
      const ssize_t got = pread(fd_, buffer, sizeof buffer, at);
      if (got < 0 && errno == EINTR) continue;
      if (got < 0) throw store_error("read", path_);
      if (got == 0) return text;
      text.append(buffer, static_cast<std::size_t>(got));
      at += got;
    }
  }

  // Appends whole lines in one write. Never glues a point to a torn line:
  // starts a new one, and leaves the torn line as it is for readers to report.
  void append_lines(std::string lines) {
    if (ends_mid_line()) lines.insert(lines.begin(), '\n');
    write_all_once(lines);
  }

 private:
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

namespace {

void create_store_directory(const std::string& directory) {
  std::error_code ec;
  std::filesystem::create_directories(directory, ec);
  if (ec) throw std::runtime_error("cannot create the store directory " + directory + ": " + ec.message());
}

}  // namespace

void Store::check_appendable() const {
  create_store_directory(directory_);
  // Opening for append is the test: permissions, a read-only file system, a
  // directory in the file's place. Nothing is written.
  const int fd = open(points_path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw store_error("append to", points_path());
  close(fd);
  if (access(directory_.c_str(), W_OK) != 0) throw store_error("write into", directory_);
}

std::size_t Store::append_new(const std::vector<Point>& points) const {
  create_store_directory(directory_);
  LockedAppendFile file(points_path());
  const StoreContents existing = read_points(file.contents(), points_path(), RawTimes::skip);
  if (!existing.problems.empty())
    throw std::runtime_error("the store has unreadable lines (first: " + existing.problems.front().describe() +
                             "); fix them first");
  std::set<std::string> known;
  for (const auto& point : existing.points) known.insert(point_identity(point));
  std::string lines;
  std::size_t added = 0;
  for (const auto& point : points) {
    if (!known.insert(point_identity(point)).second) continue;
    lines += to_json(point).dump() + "\n";
    ++added;
  }
  if (added == 0) return 0;
  file.append_lines(std::move(lines));
  return added;
}

void Store::append_lines(const std::string& path, std::string lines) const {
  create_store_directory(directory_);
  LockedAppendFile file(path);
  file.append_lines(std::move(lines));
}

StoreContents Store::read() const { return read_points_file(points_path(), RawTimes::read); }

}  // namespace heapline::bench
