// Reading a whole file a user named (a catalogue, the calibrations, a
// release comparison): only a regular file is read. A FIFO or a device in
// its place would block the reader for ever or never end; it is refused in
// one line instead, never waited for.
#pragma once

#include <string>

namespace heapline::bench {

// The file's bytes. Throws std::runtime_error "cannot read PATH: REASON"
// (it does not exist, it is not a regular file, a read error).
std::string read_regular_file(const std::string& path);

}  // namespace heapline::bench
