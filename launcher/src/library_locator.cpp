#include "library_locator.h"

#include <cstdlib>
#include <system_error>

#include <heapline/install_layout.h>
#include <heapline/shared_object.h>

namespace heapline::launcher {

namespace fs = std::filesystem;

std::optional<fs::path> locate_library(const std::string& from_option, LibraryChoice& choice) {
  fs::path candidate;
  if (!from_option.empty()) {
    candidate = from_option;
  } else if (const char* from_env = std::getenv("HEAPLINE_LIB"); from_env != nullptr && *from_env != 0) {
    candidate = from_env;
  } else {
    candidate = heapline_library(own_layout().libraries);
  }
  choice.tried = candidate.string();
  // Only a missing file is not found; what a file that is there is instead
  // (a directory, a FIFO, /dev/zero, not ELF) is said by the one check of a
  // library to preload (shared_object_problem), never "cannot find".
  if (shared_object_problem_of(candidate.string()) == SharedObjectProblem::missing) return std::nullopt;
  std::error_code error;
  choice.path = fs::absolute(candidate, error);
  return choice.path;
}

}  // namespace heapline::launcher
