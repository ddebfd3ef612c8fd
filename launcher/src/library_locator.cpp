#include "library_locator.h"

#include <cstdlib>
#include <system_error>

#include <heapline/install_layout.h>

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
  std::error_code error;
  if (!fs::is_regular_file(candidate, error)) return std::nullopt;
  choice.path = fs::absolute(candidate, error);
  return choice.path;
}

}  // namespace heapline::launcher
