// Whether gnuplot drew a picture whole: shared by the launcher's --plot and
// heapline-bench render, which install a picture only when it is whole.
// gnuplot exits 0 after a write fails part way (a full disk, a file size
// limit) and leaves a cut file, or none; such a file never replaces a good
// one.
#pragma once

#include <string_view>

namespace heapline {

enum class ImageFormat { kPng, kSvg };

inline bool image_is_whole(std::string_view bytes, ImageFormat format) {
  if (format == ImageFormat::kPng) {
    // The signature, and the IEND chunk (length 0, type, CRC) at the end.
    static constexpr std::string_view kSignature("\x89PNG\r\n\x1a\n", 8);
    static constexpr std::string_view kEnd("\0\0\0\0IEND\xae\x42\x60\x82", 12);
    return bytes.size() >= kSignature.size() + kEnd.size() && bytes.substr(0, kSignature.size()) == kSignature &&
           bytes.substr(bytes.size() - kEnd.size()) == kEnd;
  }
  const std::size_t end = bytes.find_last_not_of(" \t\r\n");
  static constexpr std::string_view kClose("</svg>");
  return end != std::string_view::npos && end + 1 >= kClose.size() &&
         bytes.substr(end + 1 - kClose.size(), kClose.size()) == kClose && bytes.find("<svg") != std::string_view::npos;
}

}  // namespace heapline
