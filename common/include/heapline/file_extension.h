// The one rule for a file name whose extension chooses what is written
// (heapline --plot: .png or .svg): the extension is matched in any letter
// case (x.PNG is a PNG, as a file manager would show it), and the refusal,
// made from the same list, says exactly that.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

namespace heapline {

// The index in `extensions` (each ".xyz", lower case) of the one `name`
// ends in, in any letter case; -1 when none. Only the last part of a path
// counts, and a name that is only an extension (".png") has none.
inline int extension_index(std::string_view name, std::span<const std::string_view> extensions) {
  const std::size_t slash = name.rfind('/');
  const std::string_view last = slash == std::string_view::npos ? name : name.substr(slash + 1);
  int index = 0;
  for (const std::string_view extension : extensions) {
    if (last.size() > extension.size()) {
      const std::string_view tail = last.substr(last.size() - extension.size());
      bool same = true;
      for (std::size_t i = 0; i < tail.size() && same; ++i) {
        const char c = tail[i] >= 'A' && tail[i] <= 'Z' ? static_cast<char>(tail[i] - 'A' + 'a') : tail[i];
        same = c == extension[i];
      }
      if (same) return index;
    }
    ++index;
  }
  return -1;
}

// What extension_index takes, as a refusal says it: "the file name must be
// a name followed by .png or .svg (in any letter case)" (".svg" alone, a
// name that is only its extension, is refused with these words too).
inline std::string extension_rule(std::span<const std::string_view> extensions) {
  std::string said = "the file name must be a name followed by ";
  std::size_t i = 0;
  for (const std::string_view extension : extensions) {
    if (i > 0) said += i + 1 == extensions.size() ? " or " : ", ";
    said += extension;
    ++i;
  }
  return said + " (in any letter case)";
}

}  // namespace heapline
