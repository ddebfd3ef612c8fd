// Every file heapline-bench writes for readers (the page, the plots' sources,
// the release comparison) is written whole to a temporary name and renamed
// into place, so a reader running at the same time (a docs build) never sees
// half of it.
#pragma once

#include <string>

namespace heapline::bench {

// Creates the parent directory if needed; throws std::runtime_error naming
// the path and the reason when the file cannot be written.
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace heapline::bench
