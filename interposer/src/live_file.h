// The live file, libheapline.so's side: creating and mapping it. Its layout
// is public (include/heapline/live_format.h): the launcher reads it.
#pragma once

#include "heapline/live_format.h"

namespace heapline {

// Creates the file at `path` exclusively (EEXIST when anything is there
// already), checks that it is ours, gives it its size with its blocks
// allocated (so a full disk cannot turn a later store into SIGBUS), and maps
// it. Returns nullptr with errno set on failure. Makes no allocation: safe
// inside the first malloc call. Nothing the library relies on is read back
// from the mapping: the authoritative counts stay in private memory.
LiveRegion* create_live_region(const char* path);
void release_live_region(LiveRegion* region);

}  // namespace heapline
