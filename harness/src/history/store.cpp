#include "heapline_bench/history/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <algorithm>
#include <map>
#include <stdexcept>

#include "heapline/regular_file.h"
#include "heapline_bench/measurement/utc_time.h"
#include "heapline_bench/text/text.h"

namespace heapline::bench {
namespace {

std::runtime_error store_error(const std::string& what, const std::string& path, int error = errno) {
  return std::runtime_error("cannot " + what + " " + printable(path) + ": " + std::strerror(error));
}

// What a store's file that is `mode` (st_mode) is not, in the words of the
// readers (heapline::RegularFile) and the outputs (heapline/output_file.h):
// "" for a regular file.
std::string not_a_store_file(const std::string& path, unsigned mode) {
  if (S_ISREG(mode)) return "";
  if (S_ISLNK(mode))
    return printable(path) + " is a symbolic link (nothing is written through a link: put the file itself in the store)";
  return printable(path) + " is " + heapline::file_kind_text(mode) + ", not a regular file";
}

// The rule of a store's own files (points.jsonl, calibration.jsonl) for
// every command, reading or appending: a regular file, or none yet. An
// append never goes through a symbolic link (the outputs' rule), so no read
// does either: every command sees the same store. Throws the one line.
void check_store_file(const std::string& path) {
  struct stat st {};
  if (lstat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return;
    throw store_error("examine", path);
  }
  if (const std::string problem = not_a_store_file(path, st.st_mode); !problem.empty())
    throw std::runtime_error(problem);
}

// The same on the store file open as `fd` (the file cannot be swapped
// between the check and the append): "" when it is a regular file.
std::string not_regular(int fd, const std::string& path) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return store_error("examine", path).what();
  return not_a_store_file(path, st.st_mode);
}

// "20260301T120000Z-4242": a name part no two writers share.
std::string unique_suffix() { return utc_now_compact() + "-" + std::to_string(getpid()); }

// Writes all of `bytes` at the end of `fd` (one write(2) for a regular
// file, more only if the kernel splits it), then fsync. On any failure
// returns errno's value and leaves what was written for the caller to roll
// back.
int write_whole(int fd, const std::string& bytes) {
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t written = write(fd, bytes.data() + done, bytes.size() - done);
    if (written < 0 && errno == EINTR) continue;
    if (written < 0) return errno;
    if (written == 0) return ENOSPC;
    done += static_cast<std::size_t>(written);
  }
  return fsync(fd) == 0 ? 0 : errno;
}

// A new file holding `bytes`, created exclusively (never another's file,
// never through a symbolic link) and fsynced; on failure no file is left.
void write_new_file(const std::string& path, const std::string& bytes) {
  const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
  if (fd < 0) throw store_error("create", path);
  const int error = write_whole(fd, bytes);
  close(fd);
  if (error != 0) {
    unlink(path.c_str());
    throw store_error("write", path, error);
  }
}

class LockedAppendFile {
 public:
  LockedAppendFile(const std::string& path, const Store::Notes& notes) : path_(path), notes_(notes) {
    check_store_file(path);
    // O_NONBLOCK: a FIFO swapped in after the check must not block the open.
    fd_ = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (fd_ < 0) throw store_error("open", path);
    if (const std::string problem = not_regular(fd_, path); !problem.empty()) {
      close(fd_);
      throw std::runtime_error(problem);
    }
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) {
        const int error = errno;
        close(fd_);
        throw store_error("lock", path, error);
      }
    }
  }
  ~LockedAppendFile() { close(fd_); }  // closing releases the lock
  LockedAppendFile(const LockedAppendFile&) = delete;
  LockedAppendFile& operator=(const LockedAppendFile&) = delete;

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

  // Appends whole lines, all or nothing: on a short or failed write, or a
  // failed fsync, the file is cut back to its size before. A torn last line
  // is moved aside first.
  void append_lines(const std::string& lines) {
    move_torn_tail_aside();
    const off_t before = size();
    const int error = write_whole(fd_, lines);
    if (error == 0) return;
    const bool rolled_back = ftruncate(fd_, before) == 0 && fsync(fd_) == 0;
    throw std::runtime_error(
        "cannot append to " + path_ + ": " + std::strerror(error) +
        (rolled_back ? "; the store is as it was before (" + std::to_string(before) + " bytes)"
                     : "; and it could not be cut back to its " + std::to_string(before) +
                           " bytes before (" + std::strerror(errno) + "): its last line may be incomplete"));
  }

 private:
  off_t size() const {
    struct stat st {};
    if (fstat(fd_, &st) != 0) throw store_error("read the size of", path_);
    return st.st_size;
  }

 public:
  // A last line without its newline is what a writer killed mid-write
  // leaves. It is moved to a file of its own beside the store, and the store
  // cut back to its last whole line: nothing is lost, and the store is whole
  // again for the readers and for the next import. A last line that holds a
  // whole, valid point and lacks only its newline (an editor dropped it) is
  // kept: completed with the newline, an append of its own, all or nothing.
  void move_torn_tail_aside() {
    const off_t end = size();
    if (end == 0) return;
    off_t tail_start = end;
    char buffer[4096];
    while (tail_start > 0) {
      const off_t from = tail_start > static_cast<off_t>(sizeof buffer) ? tail_start - static_cast<off_t>(sizeof buffer) : 0;
      const ssize_t got = pread(fd_, buffer, static_cast<std::size_t>(tail_start - from), from);
      if (got < 0 && errno == EINTR) continue;
      if (got != tail_start - from) throw store_error("read", path_);
      const void* newline = memrchr(buffer, '\n', static_cast<std::size_t>(got));
      if (newline != nullptr) {
        tail_start = from + (static_cast<const char*>(newline) - buffer) + 1;
        break;
      }
      tail_start = from;
    }
    if (tail_start == end) return;
    std::string tail(static_cast<std::size_t>(end - tail_start), '\0');
    if (pread(fd_, tail.data(), tail.size(), tail_start) != static_cast<ssize_t>(tail.size()))
      throw store_error("read", path_);
    if (holds_a_point(tail)) {
      if (const int error = write_whole(fd_, "\n"); error != 0) {
        const bool rolled_back = ftruncate(fd_, end) == 0 && fsync(fd_) == 0;
        throw std::runtime_error("cannot complete the last line of " + path_ + " with its newline: " +
                                 std::strerror(error) + (rolled_back ? "; the store is as it was before" : "") +
                                 "; nothing was appended");
      }
      notes_(path_ + ": its last line lacked its newline; its point is whole and kept: the newline was appended");
      return;
    }
    const std::string aside = path_ + ".torn-" + unique_suffix();
    try {
      write_new_file(aside, tail);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error(path_ + " ends with an incomplete line (" + std::to_string(tail.size()) +
                               " bytes, an interrupted append) that could not be moved aside (" + e.what() +
                               "); nothing was appended");
    }
    if (ftruncate(fd_, tail_start) != 0 || fsync(fd_) != 0)
      throw store_error("cut the incomplete last line (kept in " + aside + ") from", path_);
    notes_(path_ + " ended with an incomplete line of " + std::to_string(tail.size()) +
           " bytes (an append was interrupted): moved to " + aside +
           "; the store now ends at its last whole line");
  }

 private:
  static bool holds_a_point(const std::string& line) {
    try {
      parse_point_line(line);
      return true;
    } catch (const std::exception&) {
      return false;
    }
  }

  std::string path_;
  const Store::Notes& notes_;
  int fd_ = -1;
};

// The default store (<work>/bench-data) is made on the first append; its
// parent must exist, as every output's must (heapline/output_file.h): one
// directory, never a tree.
void create_store_directory(const std::string& directory) {
  if (::mkdir(directory.c_str(), 0777) != 0 && errno != EEXIST)
    throw std::runtime_error("cannot create the store directory " + directory + ": " + std::strerror(errno));
}

// The points as the store's lines, each checked by the one reader first:
// the store never holds a line that its readers would refuse.
std::string checked_lines(const std::vector<Point>& points) {
  std::string lines;
  for (const auto& point : points) {
    std::string line = point_line(point);
    try {
      parse_point_line(line);
    } catch (const std::runtime_error& e) {
      throw std::runtime_error("the point of " + printable(point.scenario) + " cannot be stored: " + e.what());
    }
    lines += line + "\n";
  }
  return lines;
}

}  // namespace

void Store::print_note(const std::string& note) { say("heapline-bench", note); }

Store::Store(std::string directory, Notes notes) : directory_(std::move(directory)), notes_(std::move(notes)) {}

std::string Store::points_path() const { return directory_ + "/points.jsonl"; }

void Store::append(const Point& point) const { append(std::vector<Point>{point}); }

void Store::append(const std::vector<Point>& points) const { append_lines(points_path(), checked_lines(points)); }

std::string Store::calibration_path() const { return directory_ + "/calibration.jsonl"; }

void Store::protect_from(heapline::OutputFiles& outputs) const {
  // The two files first: a refusal names the file an output would replace.
  outputs.reads("", points_path());
  outputs.reads("", calibration_path());
  outputs.reads("the store " + directory_, directory_);
}

void Store::check_appendable() const {
  create_store_directory(directory_);
  // Opening for append is the test: permissions, a read-only file system, a
  // directory in the file's place. Nothing is written. The calibrations
  // too: calibrate appends there, and the suite's page reads them.
  check_store_file(points_path());
  check_store_file(calibration_path());
  const int fd = open(points_path().c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
  if (fd < 0) throw store_error("append to", points_path());
  const std::string problem = not_regular(fd, points_path());
  close(fd);
  if (!problem.empty()) throw std::runtime_error(problem);
  if (access(directory_.c_str(), W_OK) != 0) throw store_error("write into", directory_);
}

std::size_t Store::append_new(const std::vector<Point>& points) const {
  create_store_directory(directory_);
  LockedAppendFile file(points_path(), notes_);
  const std::string stored = file.contents();
  const StoreContents existing = read_points(stored, points_path(), RawTimes::skip);
  // A torn last line is moved aside by the append; any other bad line
  // refuses the import, and then the store is left exactly as it was.
  for (const auto& problem : existing.problems)
    if (problem.kind != StoreProblem::Kind::incomplete)
      throw std::runtime_error("the store has unreadable lines (first: " + problem.describe() + "); fix them first");
  // Points are the same only when equal whole (point.h): the store's points
  // that share a key with an incoming one are read again with their raw
  // runs, and compared.
  std::vector<std::string_view> line_text;
  for (std::string_view rest = stored; !rest.empty();) {
    const std::size_t end = rest.find('\n');
    line_text.push_back(rest.substr(0, end));
    rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  }
  std::map<std::string, std::vector<std::size_t>> existing_by_key;
  for (std::size_t i = 0; i < existing.points.size(); ++i) existing_by_key[point_identity(existing.points[i])].push_back(i);
  std::map<std::string, std::vector<Point>> known;
  auto is_known = [&](const Point& point) {
    const std::string key = point_identity(point);
    std::vector<Point>& same_key = known[key];
    if (const auto stored = existing_by_key.find(key); stored != existing_by_key.end()) {
      for (const std::size_t i : stored->second) same_key.push_back(parse_point_line(line_text[existing.lines[i] - 1]));
      existing_by_key.erase(stored);
    }
    if (std::find(same_key.begin(), same_key.end(), point) != same_key.end()) return true;
    same_key.push_back(point);
    return false;
  };
  std::vector<Point> fresh;
  for (const auto& point : points)
    if (!is_known(point)) fresh.push_back(point);
  if (fresh.empty()) return 0;
  file.append_lines(checked_lines(fresh));
  return fresh.size();
}

void Store::append_lines(const std::string& path, std::string lines) const {
  create_store_directory(directory_);
  LockedAppendFile file(path, notes_);
  file.append_lines(lines);
}

std::string Store::keep_beside(const std::string& lines) const {
  static std::atomic<int> kept{0};
  const std::string path = directory_ + "/unstored-" + unique_suffix() + "-" + std::to_string(++kept) + ".jsonl";
  write_new_file(path, lines);
  return path;
}

std::string Store::points_to_read() const {
  check_store_file(points_path());
  return points_path();
}

std::string Store::calibrations_to_read() const {
  check_store_file(calibration_path());
  return calibration_path();
}

StoreContents Store::read() const { return read_points_file(points_to_read(), RawTimes::read); }

}  // namespace heapline::bench
