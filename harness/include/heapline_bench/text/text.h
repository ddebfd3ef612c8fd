// Text from outside (a point's fields, a catalogue, a program's output, the
// command line) as the harness's messages quote it, and the shapes of text
// it checks. The lowest layer: every other one may use it.
#pragma once

#include <iostream>
#include <string>
#include <string_view>

#include <heapline/say.h>
#include <heapline/terminal_text.h>

namespace heapline::bench {

// Every line heapline-bench prints goes out through heapline/say.h, the
// door of the launcher's lines too: say("WHO", TEXT) for one line on
// stderr, Say(std::cout or std::cerr) << ... for whole lines streamed
// together (tables, summaries), each line escaped (heapline::terminal_line).
using heapline::Say;
using heapline::say_line;
using heapline::say_lines;
inline void say(std::string_view who, std::string_view text) { heapline::say(std::cerr, who, text); }

// A JSON document for stdout: indented, ASCII only (every other character
// as \uXXXX, so nothing in it acts on a terminal) and never refused for a
// byte that is not UTF-8 (U+FFFD instead), with its newline.
template <class Json>
std::string json_text(const Json& json) {
  return json.dump(2, ' ', true, Json::error_handler_t::replace) + "\n";
}

// `text` on one line of a message: heapline::terminal_text, the one escaping
// of the launcher, the library and heapline-bench (control characters, C1
// controls, bidirectional formatting, bytes that are not UTF-8 and the
// backslash become \xNN), so a quoted value can never start a line of its
// own or rewrite the terminal.
using heapline::terminal_line;
using heapline::terminal_text;
inline std::string printable(std::string_view text) { return terminal_text(text); }

// The first control character of `text` (heapline::is_control_character:
// U+0000 to U+001F, U+007F, U+0080 to U+009F), or npos: the fields of a
// point and the names of the catalogue hold none. A byte that is not UTF-8
// is not one (a path may be any bytes).
std::size_t find_control_character(std::string_view text);

// The control character at `at` (find_control_character's answer) as
// Unicode names it: "U+000A", "U+009B".
std::string control_character_code(std::string_view text, std::size_t at);

// A commit as git names it: 4 to 64 hexadecimal digits, lower case.
bool is_commit_name(std::string_view text);

}  // namespace heapline::bench
