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

std::string as_template(const std::string& path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

std::string pid_inserted_path(const std::string& path, pid_t pid) {
  const std::size_t name = path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1;
  std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot <= name) dot = path.size();
  return path.substr(0, dot) + "." + std::to_string(pid) + path.substr(dot);
}

}  // namespace heapline::launcher
