// Text from outside (a point's fields, a catalogue, a program's output, the
// command line) as the harness's messages quote it, and the shapes of text
// it checks. The lowest layer: every other one may use it.
#pragma once

#include <string>
#include <string_view>

namespace heapline::bench {

// `text` with each byte that cannot be shown as it is (a control character
// U+0000 to U+001F, DEL, a byte that is not part of well-formed UTF-8)
// replaced by what `replacement` returns for it.
std::string with_unshowable_bytes_replaced(std::string_view text, std::string (*replacement)(unsigned char byte));

// `text` on one line of a message: control characters, DEL and bytes that
// are not UTF-8 become \xNN, so a quoted value can never start a line of its
// own or rewrite the terminal.
std::string printable(std::string_view text);

// The first control character of `text` (U+0000 to U+001F, U+007F), or
// npos: the fields of a point and the names of the catalogue hold none.
std::size_t find_control_character(std::string_view text);

// A commit as git names it: 4 to 64 hexadecimal digits, lower case.
bool is_commit_name(std::string_view text);

}  // namespace heapline::bench
