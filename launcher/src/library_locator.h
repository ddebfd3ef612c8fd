// Where libheapline.so is: --lib, else $HEAPLINE_LIB, else where heapline's
// own layout puts it (heapline/install_layout.h): beside the heapline
// executable in a build tree, in <libdir>/heapline when installed.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace heapline::launcher {

struct LibraryChoice {
  std::filesystem::path path;
  std::string tried;  // what was looked at, for the error message
};

// Returns the library's absolute path, or nullopt with choice.tried filled
// when no file is there (a file that is no library is returned: say what it
// is with shared_object_problem).
std::optional<std::filesystem::path> locate_library(const std::string& from_option, LibraryChoice& choice);

}  // namespace heapline::launcher
