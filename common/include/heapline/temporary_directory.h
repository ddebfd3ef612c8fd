// The one way heapline's programs make a temporary directory of their own
// (the launcher's plot files, heapline-bench's scratch directory of ld.so
// traces and measured runs' reports): in $TMPDIR when it is set and not
// empty, else in /tmp, as mktemp(1) does. A directory that cannot be made
// is said in one line that names the directory it was to be made in and
// why ("cannot create a temporary directory in /tmp: Read-only file
// system"), never the template filled by a call that failed.
#pragma once

#include <stdlib.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace heapline {

// Where temporary directories are made: $TMPDIR, or /tmp.
inline std::string temporary_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// A new directory PARENT/PREFIXXXXXXX of mode 0700 (mkdtemp(3)); throws
// std::runtime_error with the parent and strerror when it cannot be made.
inline std::filesystem::path make_temporary_directory(const std::string& prefix) {
  const std::string parent = temporary_parent();
  std::string pattern = (std::filesystem::path(parent) / (prefix + "XXXXXX")).string();
  if (mkdtemp(pattern.data()) == nullptr) {
    throw std::runtime_error("cannot create a temporary directory in " + parent + ": " + std::strerror(errno));
  }
  return pattern;
}

}  // namespace heapline
