// Text building without malloc: what the interposer uses for file names,
// stderr lines and the JSON output. A TextSink appends into a caller-owned
// buffer; when the buffer fills it either hands the bytes to its flush
// function (the JSON writer streams to a file descriptor) or, without one,
// marks itself truncated and drops the rest.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include <heapline/terminal_text.h>

namespace heapline {

// Copies at most capacity - 1 bytes of `text` and a NUL into `out`, never
// cutting a UTF-8 character in two.
inline void copy_utf8_prefix(char* out, std::size_t capacity, const char* text) {
  std::size_t i = 0;
  for (; text != nullptr && text[i] != 0 && i + 1 < capacity; ++i) out[i] = text[i];
  if (text != nullptr && text[i] != 0) {  // cut: back off to a character's first byte
    while (i > 0 && (static_cast<unsigned char>(text[i]) & 0xC0) == 0x80) --i;
  }
  out[i] = 0;
}

class TextSink {
 public:
  using Flush = bool (*)(void* context, const char* data, std::size_t size);

  TextSink(char* buffer, std::size_t capacity, Flush flush = nullptr, void* context = nullptr)
      : buffer_(buffer), capacity_(capacity), flush_(flush), context_(context) {}

  void append(const char* text, std::size_t size) {
    while (size > 0) {
      std::size_t room = capacity_ - size_;
      if (room == 0) {
        if (!drain()) {
          truncated_ = true;
          return;
        }
        room = capacity_ - size_;
      }
      std::size_t chunk = size < room ? size : room;
      std::memcpy(buffer_ + size_, text, chunk);
      size_ += chunk;
      text += chunk;
      size -= chunk;
    }
  }
  void append(const char* text) { append(text, std::strlen(text)); }
  void append(char c) { append(&c, 1); }
  // Text from outside (a path, a program's name, a setting's value) as a
  // terminal shows it literally: heapline/terminal_text.h, the one escaping
  // of the launcher's and heapline-bench's lines too, so that no name can
  // forge a line of the library's on stderr or drive the terminal.
  void append_shown(const char* text) {
    if (text == nullptr) return;
    escape_for_terminal(std::string_view(text), Backslash::kEscaped,
                        [this](const char* bytes, std::size_t size) { append(bytes, size); });
  }
  // Hand-rolled rather than std::to_chars, whose digit table libstdc++
  // emits as a GNU-unique symbol that would be exported from the library.
  void append_unsigned(std::uint64_t value) {
    char digits[20];
    std::size_t start = sizeof digits;
    do {
      digits[--start] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0);
    append(digits + start, sizeof digits - start);
  }
  void append_signed(std::int64_t value) {
    if (value < 0) {
      append('-');
      append_unsigned(static_cast<std::uint64_t>(-(value + 1)) + 1);
    } else {
      append_unsigned(static_cast<std::uint64_t>(value));
    }
  }
  // A JSON string literal, quotes included; control characters escaped.
  // A JSON string. Bytes that are not UTF-8 (an executable path is any
  // bytes; a name cut by a killed writer) become U+FFFD, one per byte, so the
  // file is always valid JSON.
  void append_json_string(const char* text) {
    append('"');
    const std::string_view whole(text);
    for (const unsigned char* c = reinterpret_cast<const unsigned char*>(text); *c != 0; ++c) {
      if (*c >= 0x80) {
        const std::size_t length =
            utf8_character_length(whole, static_cast<std::size_t>(reinterpret_cast<const char*>(c) - text));
        if (length == 0) {
          append("\\ufffd");
        } else {
          append(reinterpret_cast<const char*>(c), length);
          c += length - 1;
        }
      } else if (*c == '"' || *c == '\\') {
        append('\\');
        append(static_cast<char>(*c));
      } else if (*c < 0x20) {
        static const char kHex[] = "0123456789abcdef";
        char escape[6] = {'\\', 'u', '0', '0', kHex[*c >> 4], kHex[*c & 15]};
        append(escape, sizeof escape);
      } else {
        append(static_cast<char>(*c));
      }
    }
    append('"');
  }
  // "12.3 MiB": one decimal, binary units; integer arithmetic only (floating
  // to_chars lives in libstdc++.so, which the interposer must not need).
  void append_bytes(std::int64_t bytes) {
    if (bytes < 0) {
      append('-');
      bytes = -bytes;
    }
    static const char* const kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    std::uint64_t value = static_cast<std::uint64_t>(bytes);
    unsigned unit = 0;
    std::uint64_t divisor = 1;
    while (unit + 1 < sizeof kUnits / sizeof kUnits[0] && value / divisor >= 1024) {
      divisor *= 1024;
      ++unit;
    }
    if (unit == 0) {
      append_unsigned(value);
    } else {
      std::uint64_t tenths = (value * 10 + divisor / 2) / divisor;  // rounded
      append_unsigned(tenths / 10);
      append('.');
      append_unsigned(tenths % 10);
    }
    append(' ');
    append(kUnits[unit]);
  }
  // Nanoseconds as seconds with three decimals.
  void append_seconds(std::uint64_t ns) {
    std::uint64_t ms = (ns + 500000) / 1000000;
    append_unsigned(ms / 1000);
    append('.');
    char frac[3] = {static_cast<char>('0' + ms % 1000 / 100), static_cast<char>('0' + ms % 100 / 10),
                    static_cast<char>('0' + ms % 10)};
    append(frac, 3);
  }

  // Hands everything buffered to the flush function; false when it failed.
  bool drain() {
    if (flush_ == nullptr) return false;
    if (size_ > 0 && !flush_(context_, buffer_, size_)) {
      failed_ = true;
      size_ = 0;
      return false;
    }
    size_ = 0;
    return true;
  }

  // For fixed buffers (no flush function): the text so far, NUL-terminated
  // when there is room for it.
  const char* c_str() {
    if (size_ < capacity_) {
      buffer_[size_] = 0;
    } else {
      truncated_ = true;
      buffer_[capacity_ - 1] = 0;
    }
    return buffer_;
  }
  std::size_t size() const { return size_; }
  bool truncated() const { return truncated_; }
  bool failed() const { return failed_; }

 private:
  char* buffer_;
  std::size_t capacity_;
  std::size_t size_ = 0;
  Flush flush_;
  void* context_;
  bool truncated_ = false;
  bool failed_ = false;
};

// A whole line to stderr (os::write_all: retried on EINTR and short writes,
// never a signal in the host), errno kept: to the stream the process had as
// stderr when the library started, and only to it. A program may close its
// descriptor 2 and open a file of its own there (a daemon, a program that
// writes its data to fds 0 to 2): the line is then dropped, never written
// into the program's file. Where no stderr was open at the start, nothing.
void write_stderr(const char* data, std::size_t size);
// Notes which stream descriptor 2 is, for write_stderr: called first at the
// process's start (before any line), and by write_stderr if it was not.
void remember_stderr();

}  // namespace heapline
