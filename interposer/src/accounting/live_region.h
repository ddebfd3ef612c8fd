// Where the live figures, the timelines and the markers are written: the
// live file's mapping (live_header.cpp maps it and defines these), or the
// static region while there is none.
#pragma once

#include "live_file.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// The live file's mapping, or g_static_region when it could not be made:
// never null; changed only at init, at a deferred creation and in a fork
// child (under the sampling lock or single-threaded).
extern LiveRegion g_static_region;
extern LiveRegion* g_region;

}  // namespace heapline::accounting
#pragma GCC visibility pop
