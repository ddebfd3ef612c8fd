// Every file heapline-bench writes for readers (the page, the plots' sources,
// the release comparison) is written whole to a temporary name and renamed
// into place, so a reader running at the same time (a docs build) never sees
// half of it: heapline/atomic_file.h, shared with the launcher.
#pragma once

#include <heapline/atomic_file.h>

namespace heapline::bench {

using heapline::write_file_atomically;

}  // namespace heapline::bench
