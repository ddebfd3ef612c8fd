// A temporary directory removed when it goes out of scope, whatever happens
// (refusal, interruption): ld.so traces and heapline's output files of the
// measured runs live there, never in the user's directories. Made by
// heapline/temporary_directory.h, as the launcher's are.
#pragma once

#include <filesystem>
#include <string>

#include "heapline/temporary_directory.h"

namespace heapline::bench {

class ScratchDirectory {
 public:
  ScratchDirectory() : path_(make_temporary_directory("heapline-bench-").string()) {}
  ~ScratchDirectory() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDirectory(const ScratchDirectory&) = delete;
  ScratchDirectory& operator=(const ScratchDirectory&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace heapline::bench
