#include "library_locator.h"

#include <cstdlib>
#include <system_error>
#include <vector>

namespace heapline::launcher {

namespace fs = std::filesystem;

std::optional<fs::path> locate_library(const std::string& from_option, LibraryChoice& choice) {
  std::vector<fs::path> candidates;
  if (!from_option.empty()) {
    candidates.push_back(from_option);
  } else if (const char* from_env = std::getenv("HEAPLINE_LIB"); from_env != nullptr && *from_env != 0) {
    candidates.push_back(from_env);
  } else {
    std::error_code error;
    fs::path self = fs::read_symlink("/proc/self/exe", error);
    if (!error) {
      candidates.push_back(self.parent_path() / "libheapline.so");
      candidates.push_back(self.parent_path().parent_path() / "lib" / "libheapline.so");
    }
  }
  for (const auto& candidate : candidates) {
    if (!choice.tried.empty()) choice.tried += ", ";
    choice.tried += candidate.string();
    std::error_code error;
    if (fs::is_regular_file(candidate, error)) {
      choice.path = fs::absolute(candidate, error);
      return choice.path;
    }
  }
  return std::nullopt;
}

}  // namespace heapline::launcher
