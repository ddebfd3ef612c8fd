// The output path template (HEAPLINE_OUT, the interposer's output.cpp):
// format_output_path gives exactly what a plain std::string expansion gives
// (%p the pid, %e the program's name as a file name, %% a '%', the pid inserted before the
// extension when asked and the template has no %p, a relative template
// under the starting directory), or refuses when that does not fit the
// buffer, which it never writes past.
//
// Input: a flags byte (bit 0: insert the pid), a capacity byte, four bytes
// of pid, then the program name, the starting directory and the template,
// separated by NULs.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <vector>

#include <heapline/terminal_text.h>

#include "output.h"

namespace {

void check(bool property) {
  if (!property) std::abort();
}

std::string expand(const std::string& path_template, const std::string& base_dir, int pid, const std::string& exe,
                   bool insert_pid) {
  std::string path;
  if (path_template.empty() || path_template[0] != '/') {
    if (!base_dir.empty()) {
      path = base_dir;
      if (path.back() != '/') path += '/';
    }
  }
  bool has_pid = false;
  for (std::size_t i = 0; i < path_template.size(); ++i) {
    const char next = i + 1 < path_template.size() ? path_template[i + 1] : '\0';
    if (path_template[i] == '%' && next == 'p') {
      path += std::to_string(pid);
      has_pid = true;
      ++i;
    } else if (path_template[i] == '%' && next == 'e') {
      // The program's name as a file name: the terminal's rule, held by
      // common.TerminalText.AFileNameFromTextIsShownAsWrittenByteForByte.
      heapline::name_for_file(exe.empty() ? "unknown" : exe,
                              [&path](const char* bytes, std::size_t size) { path.append(bytes, size); });
      ++i;
    } else if (path_template[i] == '%' && next == '%') {
      path += '%';
      ++i;
    } else {
      path += path_template[i];
    }
  }
  if (insert_pid && !has_pid) {
    const std::size_t slash = path.rfind('/');
    const std::size_t name = slash == std::string::npos ? 0 : slash + 1;
    const std::size_t dot = path.rfind('.');
    const std::size_t at = dot != std::string::npos && dot > name ? dot : path.size();
    path = path.substr(0, at) + "." + std::to_string(pid) + path.substr(at);
  }
  return path;
}

std::string_view take(std::string_view& text) {
  const std::size_t end = text.find('\0');
  const std::string_view part = text.substr(0, end);
  text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
  return part;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 6) return 0;
  const bool insert_pid = (data[0] & 1) != 0;
  const std::size_t capacity = (data[1] == 0 ? 4096 : data[1]);
  std::int32_t pid;
  std::memcpy(&pid, data + 2, sizeof pid);
  std::string_view text(reinterpret_cast<const char*>(data) + 6, size - 6);
  const std::string exe(take(text));
  const std::string base_dir(take(text));
  const std::string path_template(take(text));

  // Exactly `capacity` bytes: a write past them is a heap overflow the
  // sanitizer sees.
  std::vector<char> out(capacity);
  const bool made = heapline::format_output_path(path_template.c_str(), base_dir.c_str(), pid, exe.c_str(),
                                                 insert_pid, out.data(), capacity);
  const std::string expected = expand(path_template, base_dir, pid, exe, insert_pid);
  if (made) {
    check(std::memchr(out.data(), '\0', capacity) != nullptr);
    check(expected == out.data());
  } else {
    check(expected.size() + 1 > capacity);
  }
  return 0;
}
