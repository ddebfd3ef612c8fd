// The one rule for every file heapline's programs write (the launcher's
// plots, profiles and converted reports' names, heapline-bench's exports,
// pages, plots and comparisons); the library's reports follow the same rule
// in its own code (interposer/src/base/output.cpp), without the C++ runtime:
//  - a name is checked before the work that fills it (before the command
//    runs, before a measurement or a render): an empty name, a name longer
//    than its filesystem takes (with room for the names derived from it),
//    a directory that is missing or not writable, and a name that exists
//    but is not a regular file (a symbolic link, a FIFO, a device, a
//    directory) are refused in one line. Nothing is written through a link
//    or into a device: a regular file is made and renamed into place, which
//    would replace a device node or a link by a file;
//  - two outputs of one command that name the same file are refused, and
//    so is an output that names a file the command reads (profile -o
//    REPORT replaced the report it read); so is an output whose name goes
//    through another output's or an input's, which the one would need as a
//    directory and the other as a file (compare --json X --out X measured
//    for minutes, then found X a directory);
//  - the directories the program names itself below a user's (a page's
//    plots/) are never symbolic links: a link there would send the files
//    anywhere;
//  - the bytes go to a temporary file of this process's own, created
//    exclusively beside the target (".heapline-XXXXXX", short, so that any
//    name the filesystem takes has room for it), written whole and renamed
//    into place only when every output of the command is written: a full
//    disk or a file size limit leaves the earlier files as they were, and a
//    reader never sees half a file;
//  - a new file gets the mode open(2) would give it (0666 less the umask),
//    a file replaced keeps its own.
// "-" is standard output only where an option says so; the caller writes
// it (through the door of printed lines where it is a terminal).
#pragma once

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "heapline/file_kind.h"
#include "heapline/terminal_text.h"

namespace heapline {

// An output refused or not written: what() is one line, "NAME: why".
class OutputRefused : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct OutputRules {
  // How many directories at the end of the way to the file the command
  // makes when they are missing: the output directory it was asked for
  // (render --out DIR: 1 for DIR/performance.md) and its own below it
  // (2 for DIR/plots/x.svg). Any directory above them that is missing is
  // refused, as a missing directory of a file is (0): a mistyped path
  // made a tree of directories anywhere (--out /nonexistent/x.csv, as root,
  // made /nonexistent).
  std::size_t made_directories = 0;
  // Bytes that names derived from this one add to its last part (the
  // library's ".<pid>.<random>.tmp", a live file's ".live"): such a name
  // must fit in the filesystem too.
  std::size_t derived_bytes = 0;
  // How many of the directories on the way to the file the program names
  // itself (a page's "plots"), below the one the user named: each must be
  // a directory, not a symbolic link to one.
  std::size_t own_directories = 0;
};

namespace output_detail {


// Writes all of `bytes` to `fd`; 0 or errno's value.
inline int write_all(int fd, std::string_view bytes) {
  std::size_t written = 0;
  while (written < bytes.size()) {
    const ssize_t n = ::write(fd, bytes.data() + written, bytes.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    written += static_cast<std::size_t>(n);
  }
  return 0;
}

// This process's umask, read without changing it (umask(2) sets it to
// read it, which another thread could see in between).
inline mode_t process_umask() {
  if (std::FILE* status = std::fopen("/proc/self/status", "re")) {
    char line[256];
    unsigned mask = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof line, status) != nullptr) found = std::sscanf(line, "Umask: %o", &mask) == 1;
    std::fclose(status);
    if (found) return static_cast<mode_t>(mask);
  }
  const mode_t mask = ::umask(022);
  ::umask(mask);
  return mask;
}

// The mode of the file written at `path`: the regular file it replaces
// keeps its permissions; a new file gets 0666 less the umask, as open(2)
// would give it.
inline mode_t mode_for(const std::string& path) {
  struct stat replaced {};
  if (::lstat(path.c_str(), &replaced) == 0 && S_ISREG(replaced.st_mode)) return replaced.st_mode & 0777;
  return 0666 & ~process_umask();
}

inline std::string directory_of(const std::string& path) {
  const std::string parent = std::filesystem::path(path).parent_path().string();
  return parent.empty() ? "." : parent;
}

// What the symbolic link `path` points to when that does not exist ("" when
// `path` is no such link).
inline std::string dangling_link_target(const std::string& path) {
  struct stat info {};
  if (::lstat(path.c_str(), &info) != 0 || !S_ISLNK(info.st_mode)) return "";
  if (::stat(path.c_str(), &info) == 0) return "";
  char target[PATH_MAX];
  const ssize_t length = ::readlink(path.c_str(), target, sizeof target - 1);
  if (length <= 0) return "";
  return terminal_text(std::string_view(target, static_cast<std::size_t>(length)));
}

// The nearest directory on the way to `dir` that exists ("" with `why`
// when a part of the way is not a directory or cannot be looked at).
inline std::string nearest_existing(std::string dir, std::string& why) {
  for (;;) {
    struct stat info {};
    if (::stat(dir.c_str(), &info) == 0) {
      if (!S_ISDIR(info.st_mode)) {
        why = dir + " is not a directory";
        return "";
      }
      return dir;
    }
    if (errno != ENOENT) {
      why = dir + ": " + std::strerror(errno);
      return "";
    }
    // A symbolic link to nothing is said as such: mkdir there fails with
    // "File exists", which named a directory that does not exist.
    if (const std::string target = dangling_link_target(dir); !target.empty()) {
      why = dir + " is a symbolic link to " + target + ", which does not exist";
      return "";
    }
    const std::string up = directory_of(dir);
    if (up == dir) {
      why = dir + ": " + std::strerror(ENOENT);
      return "";
    }
    dir = up;
  }
}

}  // namespace output_detail

// Why `path` cannot be written as an output under `rules`; "" when it can.
// The reason names the file or directory it is about ("DIR: No such file
// or directory", "PATH is a FIFO, not a regular file"). Touches nothing on
// disk.
inline std::string output_problem(const std::string& path, const OutputRules& rules = {}) {
  using namespace output_detail;
  if (path.empty()) return "an empty name is not a file name";
  if (path.back() == '/') return path + " names a directory, not a file";
  // A name with a newline or an escape breaks every script that lists
  // names line by line (ls | while read), and forges lines where printed;
  // one with a right-to-left override or bytes that are not UTF-8 shows as
  // another name. The terminal's rule (terminal_text.h) is the name's.
  if (const std::string problem = name_character_problem(path); !problem.empty()) {
    return problem + ": give a name without one, as a script that lists names line by line needs";
  }
  if (path.size() + rules.derived_bytes >= PATH_MAX) {
    return "the path is too long (" + std::to_string(path.size()) + " bytes; the system takes at most " +
           std::to_string(PATH_MAX - 1 - rules.derived_bytes) + (rules.derived_bytes > 0 ? " here" : "") + ")";
  }
  // Which part is too long, the file's name or a directory's, is said as
  // it is: no filesystem takes a part above NAME_MAX, and the one the file
  // goes to may take fewer (below).
  const std::filesystem::path whole(path);
  for (auto part = whole.begin(); part != whole.end(); ++part) {
    if (std::next(part) != whole.end() && part->native().size() > NAME_MAX) {
      return "a directory's name on the way is too long (" + std::to_string(part->native().size()) +
             " bytes; a name has at most " + std::to_string(NAME_MAX) + "): " + part->native().substr(0, 40) + "...";
    }
  }
  const std::string dir = directory_of(path);
  std::string why;
  const std::string existing = nearest_existing(dir, why);
  if (existing.empty()) return why;
  {
    // The directory the command would not make is the one refused: the
    // parent of those it makes.
    std::string beyond = dir;
    for (std::size_t i = 0; i < rules.made_directories && beyond != existing; ++i) beyond = directory_of(beyond);
    if (beyond != existing) return beyond + ": " + std::strerror(ENOENT);
  }
  {
    std::string own = dir;
    for (std::size_t i = 0; i < rules.own_directories; ++i, own = directory_of(own)) {
      struct stat info {};
      if (::lstat(own.c_str(), &info) == 0 && S_ISLNK(info.st_mode)) {
        return own + " is a symbolic link (nothing is written through a link: remove it, the program makes the "
                     "directory)";
      }
    }
  }
  if (::access(existing.c_str(), W_OK | X_OK) != 0) {
    return "cannot write in " + existing + " (" + std::strerror(errno) + ")";
  }
  long name_max = ::pathconf(existing.c_str(), _PC_NAME_MAX);
  if (name_max <= 0) name_max = NAME_MAX;
  for (auto part = whole.begin(); part != whole.end(); ++part) {
    const bool last = std::next(part) == whole.end();
    const std::size_t room = static_cast<std::size_t>(name_max) - (last ? rules.derived_bytes : 0);
    if (part->native().size() > room) {
      const std::string sizes = " (" + std::to_string(part->native().size()) + " bytes; its filesystem takes at most " +
                                std::to_string(room) + (last && rules.derived_bytes > 0
                                                            ? ", with room for the names made from it)"
                                                            : ")");
      return last ? "the file's name is too long" + sizes
                  : "a directory's name on the way is too long" + sizes + ": " + part->native().substr(0, 40) + "...";
    }
  }
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0) {
    if (S_ISLNK(info.st_mode)) return path + " is a symbolic link (nothing is written through a link: name the file itself)";
    if (!S_ISREG(info.st_mode)) return path + " is " + file_kind_name(info.st_mode) + ", not a regular file";
  } else if (errno != ENOENT) {
    return path + ": " + std::strerror(errno);
  }
  return "";
}

// The outputs of one command: claimed (checked) before the work, staged
// (written to temporaries) as they are made, committed (renamed into place)
// together at the end. Whatever was not committed is removed.
class OutputFiles {
 public:
  OutputFiles() = default;
  OutputFiles(const OutputFiles&) = delete;
  OutputFiles& operator=(const OutputFiles&) = delete;
  ~OutputFiles() { discard(); }

  // Checks `path` and that no output claimed before, and no file the
  // command reads, names the same file or lies on the way to it or below
  // it (clash below); throws OutputRefused "SHOWN: why", where `shown` is
  // how the user named it ("--plot x.svg"; the path itself when empty).
  void claim(const std::string& shown, const std::string& path, const OutputRules& rules = {}) {
    const std::string name = shown.empty() ? path : shown;
    if (const std::string problem = output_problem(path, rules); !problem.empty()) {
      throw OutputRefused(name + ": " + problem);
    }
    const Claimed output{name, path, identity(path), location(path), rules};
    for (const Claimed& other : claimed_) {
      if (const std::string why = clash(output, other); !why.empty()) {
        throw OutputRefused(name + ": " + why + other.shown + ", another output of this command (each output needs a "
                                                           "name of its own)");
      }
    }
    for (const Claimed& input : inputs_) {
      if (const std::string why = clash(output, input); !why.empty()) {
        throw OutputRefused(name + ": " + why + input.shown + ", which this command reads (give the output another name)");
      }
    }
    claimed_.push_back(output);
  }

  // Names a file the command reads (`shown` as the user named it), before
  // or after the outputs are claimed: no output may be it, nor lie on the
  // way to it or below it.
  void reads(const std::string& shown, const std::string& path) {
    const std::string name = shown.empty() ? path : shown;
    const Claimed input{name, path, identity(path), location(path), {}};
    for (const Claimed& output : claimed_) {
      if (const std::string why = clash(output, input); !why.empty()) {
        throw OutputRefused(output.shown + ": " + why + name + ", which this command reads (give the output another name)");
      }
    }
    inputs_.push_back(input);
  }

  // Writes `bytes` for `path` (claimed before, or claimed now without a
  // name for it) to a temporary file beside it; throws OutputRefused.
  void stage(const std::string& path, std::string_view bytes) {
    const Claimed* claim = find(path);
    if (claim == nullptr) {
      this->claim("", path);
      claim = &claimed_.back();
    }
    const std::string dir = output_detail::directory_of(path);
    if (const std::string problem = output_problem(path, claim->rules); !problem.empty()) {
      discard();
      throw OutputRefused(path + ": " + problem);
    }
    make_directories(path, dir, claim->rules.made_directories);
    std::string temporary = dir + "/.heapline-XXXXXX";
    const int fd = ::mkostemp(temporary.data(), O_CLOEXEC);
    if (fd < 0) throw OutputRefused(path + ": cannot create a file in " + dir + ": " + std::strerror(errno));
    staged_.push_back({path, temporary});
    if (const int error = output_detail::write_all(fd, bytes); error != 0) {
      ::close(fd);
      discard();
      throw OutputRefused(path + ": cannot be written: " + std::strerror(error) + "; nothing was replaced");
    }
    // mkostemp makes the file 0600: the file gets the mode a new file of
    // this user's gets (0666 less the umask), or keeps the one of the file
    // it replaces (a profile a user made private stayed private after a
    // rerun only by luck of the writer; 0644 made it world-readable).
    ::fchmod(fd, output_detail::mode_for(path));
    if (::close(fd) != 0) {
      const int error = errno;
      discard();
      throw OutputRefused(path + ": cannot be written: " + std::strerror(error) + "; nothing was replaced");
    }
  }

  // Makes the last `count` directories of `dir` that are missing, one
  // level at a time (output_problem checked that the one above them
  // exists): never a tree of directories. Throws OutputRefused.
  static void make_directories(const std::string& path, const std::string& dir, std::size_t count) {
    std::vector<std::string> missing;
    std::string level = dir;
    for (std::size_t i = 0; i < count; ++i, level = output_detail::directory_of(level)) {
      struct stat info {};
      if (::stat(level.c_str(), &info) == 0) break;
      missing.push_back(level);
    }
    for (auto level = missing.rbegin(); level != missing.rend(); ++level) {
      if (::mkdir(level->c_str(), 0777) != 0 && errno != EEXIST)
        throw OutputRefused(path + ": cannot create " + *level + ": " + std::strerror(errno));
    }
  }

  // Renames every staged file into place, in the order staged. A name that
  // became something other than a regular file meanwhile is refused.
  void commit() {
    for (std::size_t i = 0; i < staged_.size(); ++i) {
      // A copy: the refusals below erase the files already in place from
      // staged_ before they say which name failed (a reference into it
      // read freed memory).
      const Staged file = staged_[i];
      struct stat info {};
      if (::lstat(file.path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
        staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
        discard();
        throw OutputRefused(file.path + " is " + file_kind_name(info.st_mode) +
                            " now, not a regular file; nothing more was replaced");
      }
      if (std::rename(file.temporary.c_str(), file.path.c_str()) != 0) {
        const int error = errno;
        staged_.erase(staged_.begin(), staged_.begin() + static_cast<std::ptrdiff_t>(i));
        discard();
        throw OutputRefused(file.path + ": cannot be renamed into place: " + std::strerror(error));
      }
    }
    staged_.clear();
  }

  // Removes the temporary files not committed.
  void discard() {
    for (const Staged& file : staged_) ::unlink(file.temporary.c_str());
    staged_.clear();
  }

 private:
  struct Claimed {
    std::string shown;
    std::string path;
    std::string identity;
    std::string location;  // the absolute path, its directories resolved
    OutputRules rules;
  };
  struct Staged {
    std::string path;
    std::string temporary;
  };

  // The file a name stands for: an existing file's device and inode (a
  // hard link is the same file), else its directory resolved (a link to a
  // directory, "..", "./") and its own last part.
  static std::string identity(const std::string& path) {
    struct stat info {};
    if (::stat(path.c_str(), &info) == 0) {
      return "inode " + std::to_string(info.st_dev) + ":" + std::to_string(info.st_ino);
    }
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(path, error);
    if (error) return path;
    const std::filesystem::path dir = std::filesystem::weakly_canonical(absolute.parent_path(), error);
    return ((error ? absolute.parent_path() : dir) / absolute.filename()).lexically_normal().string();
  }

  // Where a name points, as an absolute path with its links and ".."
  // resolved as far as they exist.
  static std::string location(const std::string& path) {
    std::error_code error;
    const std::filesystem::path absolute = std::filesystem::absolute(path, error);
    if (error) return path;
    const std::filesystem::path resolved = std::filesystem::weakly_canonical(absolute, error);
    return (error ? absolute : resolved).lexically_normal().string();
  }

  // The start of the line that says how `output` clashes with `other` (an
  // output or an input), ending before other's name; "" when it does not:
  // the same file, or one of the two would be a directory on the way to
  // the other, which the other needs to be a file.
  static std::string clash(const Claimed& output, const Claimed& other) {
    if (output.identity == other.identity) return "the same file as ";
    auto below = [](const std::string& inner, const std::string& outer) {
      return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 &&
             (outer.back() == '/' || inner[outer.size()] == '/');
    };
    if (below(output.location, other.location)) return "would be written inside ";
    if (below(other.location, output.location)) return "lies on the way to ";
    return "";
  }

  const Claimed* find(const std::string& path) const {
    for (const Claimed& claim : claimed_) {
      if (claim.path == path) return &claim;
    }
    return nullptr;
  }

  std::vector<Claimed> claimed_;
  std::vector<Claimed> inputs_;
  std::vector<Staged> staged_;
};

// One output written by the rule: checked, written whole, renamed into
// place. Throws OutputRefused.
inline void write_output_file(const std::string& path, std::string_view bytes, const OutputRules& rules = {}) {
  OutputFiles files;
  files.claim("", path, rules);
  files.stage(path, bytes);
  files.commit();
}

// Appends `bytes` to a file another program keeps (a CI job's summary): a
// regular file only, never through a link, created when missing; written
// whole or refused. Throws OutputRefused.
inline void append_to_output_file(const std::string& path, std::string_view bytes) {
  if (path.empty()) throw OutputRefused("an empty name is not a file name");
  // Looked at before it is opened: opening a device can act on it.
  struct stat info {};
  if (::lstat(path.c_str(), &info) == 0 && !S_ISREG(info.st_mode)) {
    throw OutputRefused(path + " is " + file_kind_name(info.st_mode) + ", not a regular file");
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC, 0644);
  if (fd < 0) {
    throw OutputRefused(path + ": " + std::strerror(errno));
  }
  if (::fstat(fd, &info) != 0 || !S_ISREG(info.st_mode)) {
    ::close(fd);
    throw OutputRefused(path + " is " + file_kind_name(info.st_mode) + ", not a regular file");
  }
  const int error = output_detail::write_all(fd, bytes);
  ::close(fd);
  if (error != 0) throw OutputRefused(path + ": cannot be written: " + std::strerror(error));
}

}  // namespace heapline
