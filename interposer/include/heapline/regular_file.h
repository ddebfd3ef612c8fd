// Opening a file that something outside heapline wrote or named (a report,
// a live file, a store, a module a report names): only a regular file is
// ever read. A FIFO, a device, a directory or a socket is refused at once,
// never opened (its type is looked at first) and never waited on: the open
// is non-blocking (a FIFO swapped in would block an ordinary open for ever)
// and the type is checked again on the open descriptor (fstat), so the file
// cannot be swapped between the check and the read. Symbolic links are
// followed: a library's name is often one.
#pragma once

#include <cstddef>
#include <string>

namespace heapline {

// An open regular file (O_RDONLY | O_CLOEXEC, blocking again once its type is
// known), or the reason it is not one.
class RegularFile {
 public:
  // One line for the user when this fails: "PATH: what is wrong".
  static RegularFile open(const std::string& path);
  RegularFile(RegularFile&& other) noexcept;
  RegularFile& operator=(RegularFile&& other) noexcept;
  RegularFile(const RegularFile&) = delete;
  RegularFile& operator=(const RegularFile&) = delete;
  ~RegularFile();

  bool ok() const { return fd_ >= 0; }
  int fd() const { return fd_; }
  std::size_t size() const { return size_; }
  // "PATH: what is wrong", when !ok().
  const std::string& error() const { return error_; }
  // The descriptor, handed to its new owner (a library that closes it); the
  // object holds none after.
  int release();
  // The whole file, at most `limit` bytes (more is an error); empty `error`
  // on success.
  std::string read_all(std::size_t limit, std::string& error) const;

 private:
  RegularFile() = default;
  std::string path_;
  std::string error_;
  int fd_ = -1;
  std::size_t size_ = 0;
};

// What kind of file `mode` (st_mode) is, for a message: "a FIFO", "a
// directory", ...
const char* file_kind_text(unsigned mode);

}  // namespace heapline
