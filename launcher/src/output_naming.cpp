#include "output_naming.h"

#include <filesystem>

#include <heapline/terminal_text.h>

namespace heapline::launcher {

namespace {

constexpr const char* kDefaultTemplate = "heapline.%e.%p.json";

// `pattern` with %p as `pid`, %e as the command's base name (as the
// library writes it: name_for_file), %% as %.
std::string expanded(const std::string& pattern, const std::string& command, const std::string& pid) {
  const std::string name = std::filesystem::path(command).filename().string();
  std::string path;
  for (std::size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size()) {
      char field = pattern[i + 1];
      if (field == 'p') {
        path += pid;
        ++i;
        continue;
      }
      if (field == 'e') {
        name_for_file(name, [&](const char* bytes, std::size_t size) { path.append(bytes, size); });
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

}  // namespace

std::string root_output_path(const std::string& out_template, const std::string& command, pid_t pid) {
  return expanded(out_template.empty() ? kDefaultTemplate : out_template, command, std::to_string(pid));
}

std::string shown_default_output_path(const std::string& command) { return expanded(kDefaultTemplate, command, "PID"); }

std::string report_name_problem(const std::string& name, bool template_fields) {
  if (name == "-") {
    return "a report is a file, written whole, never standard output (as - is for profile -o and export --out): "
           "give a file name";
  }
  if (!template_fields) return "";
  for (std::size_t i = 0; i < name.size(); ++i) {
    if (name[i] != '%') continue;
    if (i + 1 == name.size() || (name[i + 1] != 'p' && name[i + 1] != 'e' && name[i + 1] != '%')) {
      return "a % must be followed by p (the pid), e (the command's name) or % (a %), as in HEAPLINE_OUT";
    }
    ++i;
  }
  return "";
}

std::string as_template(const std::string& path) {
  std::string out;
  for (char c : path) {
    out += c;
    if (c == '%') out += '%';
  }
  return out;
}

namespace {

// Where pid_inserted_path puts the pid: before the file name's extension.
std::size_t pid_insertion_point(const std::string& path) {
  const std::size_t name = path.rfind('/') == std::string::npos ? 0 : path.rfind('/') + 1;
  std::size_t dot = path.rfind('.');
  if (dot == std::string::npos || dot <= name) dot = path.size();
  return dot;
}

}  // namespace

std::string pid_inserted_path(const std::string& path, pid_t pid) {
  const std::size_t dot = pid_insertion_point(path);
  return path.substr(0, dot) + "." + std::to_string(pid) + path.substr(dot);
}

pid_t pid_of_inserted_path(const std::string& path, const std::string& candidate) {
  const std::size_t dot = pid_insertion_point(path);
  const std::string before = path.substr(0, dot) + ".";
  const std::string after = path.substr(dot);
  if (candidate.size() <= before.size() + after.size() || candidate.compare(0, before.size(), before) != 0 ||
      candidate.compare(candidate.size() - after.size(), after.size(), after) != 0) {
    return 0;
  }
  const std::string digits = candidate.substr(before.size(), candidate.size() - before.size() - after.size());
  if (digits.size() > 9 || digits[0] == '0' || digits.find_first_not_of("0123456789") != std::string::npos) return 0;
  return static_cast<pid_t>(std::stol(digits));
}

}  // namespace heapline::launcher
