#include "output_naming.h"

#include <filesystem>

namespace heapline::launcher {

std::string root_output_path(const std::string& out_template, const std::string& command, pid_t pid) {
  const std::string name = std::filesystem::path(command).filename().string();
  const std::string pattern = out_template.empty() ? "heapline.%e.%p.json" : out_template;
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char field = pattern[i + 1];
      if (field == 'p') {
        path += std::to_string(pid);
        ++i;
        continue;
      }
      if (field == 'e') {
        path += name;
        ++i;
        continue;
      }
      if (field == '%') {
        path += '%';
        ++i;
        continue;
      }
    }
    path += pattern[i];
  }
  return path;
}

}  // namespace heapline::launcher
