// Text that came from outside (a path, a program's name, a marker, a
// machine's description, any text read from a file) as a terminal or a
// script may show it: the one rule of heapline's programs and library.
//
// A character is shown as it is only when it is well-formed UTF-8 and a
// terminal prints it rather than acts on it. Every byte of anything else
// becomes the four characters \xNN (lower-case hex):
//  - C0 controls and DEL: a newline would forge a second line of a message,
//    an escape sequence drive the terminal (clear it, move the cursor,
//    retitle the window);
//  - C1 controls, U+0080 to U+009F: U+009B is CSI to terminals that take
//    8-bit controls;
//  - the bidirectional formatting characters (U+202A to U+202E, U+2066 to
//    U+2069) and the line and paragraph separators (U+2028, U+2029), which
//    reorder or break what the rest of the line shows;
//  - bytes that are not UTF-8 (a path is any bytes).
// terminal_text() also writes the backslash as \x5c, so that escaped text
// is unambiguous (a name holding the characters "\x0a" reads \x5cx0a, apart
// from a newline): every name a message or a summary shows goes through it
// where the text is put together. terminal_line() keeps the backslash, so
// that a line made of pieces escaped before passes unchanged: it is the last
// door of every line a program prints (a message that quotes an error
// someone else wrote, a path no one escaped), and nothing reaches the
// terminal raw even when a piece was never escaped.
//
// Allocation-free and header-only: libheapline.so writes its stderr lines
// with it (through TextSink), the launcher and heapline-bench every line
// they print (terminal_text).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace heapline {

// The length of the well-formed UTF-8 character at `at` (RFC 3629: no
// overlong form, no surrogate, nothing past U+10FFFF), 0 when there is none.
constexpr std::size_t utf8_character_length(std::string_view text, std::size_t at) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char lead = byte(at);
  if (lead < 0x80) return 1;
  std::size_t length = 0;
  unsigned char low = 0x80, high = 0xBF;  // the range of the second byte
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (at + length > text.size()) return 0;
  if (byte(at + 1) < low || byte(at + 1) > high) return 0;
  for (std::size_t i = 2; i < length; ++i) {
    if (byte(at + i) < 0x80 || byte(at + i) > 0xBF) return 0;
  }
  return length;
}

// Whether the well-formed character `character` (one UTF-8 sequence) is a
// control character (Unicode's category Cc): C0 (U+0000 to U+001F), DEL
// (U+007F) or C1 (U+0080 to U+009F). Text that must hold none (the fields of
// a stored point, the names of a catalogue) is checked with this list.
constexpr bool is_control_character(std::string_view character) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(character[i]); };
  if (character.size() == 1) return byte(0) < 0x20 || byte(0) == 0x7F;
  return character.size() == 2 && byte(0) == 0xC2 && byte(1) <= 0x9F;  // C1: U+0080..U+009F
}

// Whether the well-formed character `character` (one UTF-8 sequence) is one
// a terminal shows as it is (see above).
constexpr bool shows_as_itself(std::string_view character) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(character[i]); };
  if (is_control_character(character)) return false;
  if (character.size() == 3 && byte(0) == 0xE2 && byte(1) == 0x80) {
    return !(byte(2) >= 0xA8 && byte(2) <= 0xAE);  // U+2028, U+2029, U+202A..U+202E
  }
  if (character.size() == 3 && byte(0) == 0xE2 && byte(1) == 0x81) {
    return !(byte(2) >= 0xA6 && byte(2) <= 0xA9);  // U+2066..U+2069
  }
  return true;
}

enum class Backslash { kEscaped, kKept };

// Hands `text` as a terminal shows it literally to emit(const char* bytes,
// std::size_t size), piece by piece: the one escaping of terminal text.
template <class Emit>
constexpr void escape_for_terminal(std::string_view text, Backslash backslash, Emit&& emit) {
  constexpr char kHex[] = "0123456789abcdef";
  for (std::size_t at = 0; at < text.size();) {
    std::size_t length = utf8_character_length(text, at);
    const bool shown = length > 0 && !(text[at] == '\\' && backslash == Backslash::kEscaped) &&
                       shows_as_itself(text.substr(at, length));
    if (length == 0) length = 1;  // a stray byte: escaped alone
    if (shown) {
      emit(text.data() + at, length);
    } else {
      for (std::size_t i = 0; i < length; ++i) {
        const unsigned char c = static_cast<unsigned char>(text[at + i]);
        const char code[4] = {'\\', 'x', kHex[c >> 4], kHex[c & 15]};
        emit(code, sizeof code);
      }
    }
    at += length;
  }
}

// Whether a terminal shows every character of `text` as it is (the
// backslash aside: terminal_line would change nothing).
constexpr bool shows_as_written(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_character_length(text, at);
    if (length == 0 || !shows_as_itself(text.substr(at, length))) return false;
    at += length;
  }
  return true;
}

// Where heapline makes a file's name from outside text (a program's name
// for %e in a report's name, by the library and by the launcher that
// predicts it): every character a terminal shows as it is kept, every byte
// of anything else handed to emit as '_'. A name made so passes the output
// rule (output_file.h: no character a terminal does not show as itself),
// lists on one line and cannot drive a terminal that shows it.
template <class Emit>
constexpr void name_for_file(std::string_view text, Emit&& emit) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_character_length(text, at);
    if (length > 0 && shows_as_itself(text.substr(at, length))) {
      emit(text.data() + at, length);
      at += length;
      continue;
    }
    const std::size_t bytes = length > 0 ? length : 1;
    for (std::size_t i = 0; i < bytes; ++i) emit("_", 1);
    at += bytes;
  }
}

// What is wrong with `text` as a name heapline writes under ("" when a
// terminal shows every character of it as it is): the first character
// that it does not, said as what it is, with its bytes as \xNN.
inline std::string name_character_problem(std::string_view text) {
  for (std::size_t at = 0; at < text.size();) {
    const std::size_t length = utf8_character_length(text, at);
    if (length > 0 && shows_as_itself(text.substr(at, length))) {
      at += length;
      continue;
    }
    const std::size_t bytes = length > 0 ? length : 1;
    std::string shown;
    escape_for_terminal(text.substr(at, bytes), Backslash::kEscaped,
                        [&](const char* piece, std::size_t size) { shown.append(piece, size); });
    const char* what = length == 0 ? "a byte that is not UTF-8"
                       : is_control_character(text.substr(at, length))
                           ? "a control character"
                           : "a character that reorders or breaks the line";
    return std::string("the name holds ") + what + " (" + shown + ")";
  }
  return "";
}

inline std::string escaped_for_terminal(std::string_view text, Backslash backslash) {
  std::string out;
  out.reserve(text.size());
  escape_for_terminal(text, backslash, [&](const char* bytes, std::size_t size) { out.append(bytes, size); });
  return out;
}

// A name, a path, a marker, any text from outside, as a terminal shows it
// literally, backslash escaped.
inline std::string terminal_text(std::string_view text) { return escaped_for_terminal(text, Backslash::kEscaped); }

// One line for the terminal, its backslashes kept (text escaped before
// passes unchanged): the last door of every printed line.
inline std::string terminal_line(std::string_view text) { return escaped_for_terminal(text, Backslash::kKept); }

// terminal_text, cut to at most `max_bytes` of `text` (never inside a
// character) and marked "..." when cut.
inline std::string terminal_text(std::string_view text, std::size_t max_bytes) {
  if (text.size() <= max_bytes) return terminal_text(text);
  std::size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return terminal_text(text.substr(0, cut)) + "...";
}

}  // namespace heapline
