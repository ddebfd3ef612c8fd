// Reading a whole file a user named (a catalogue, the calibrations, a
// release comparison): only a regular file is read. A FIFO or a device in
// its place would block the reader for ever or never end; it is refused in
// one line instead, never waited for.
#pragma once

#include <string>

namespace heapline::bench {

// The file's bytes, through heapline::RegularFile (the one reader of files
// from outside, shared with the launcher). Throws std::runtime_error with
// its line, control bytes shown escaped: "PATH: No such file or directory",
// "PATH is a FIFO, not a regular file", "PATH is too large (...)".
std::string read_regular_file(const std::string& path);

}  // namespace heapline::bench
