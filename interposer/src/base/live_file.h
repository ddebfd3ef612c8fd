// The live file, libheapline.so's side: making it, mapping it, and giving it
// its name. Its layout is public (include/heapline/live_format.h): the
// launcher reads it.
//
// A live file never appears half-made under its name. It is created under a
// temporary name beside that name (os::create_temp_file:
// `<name>.<pid>.tmp`), written whole from an image of the region (identity,
// figures, the timeline so far: real blocks, so that a store into the
// mapping can never meet a hole of a full disk and raise SIGBUS), mapped, and
// only then renamed into place without replacing anything (os::rename_new).
// Killed at any instruction, the library leaves under a `.live` name either
// nothing or a file with its identity (magic, pid, start); what it can leave
// unfinished is a `<name>.<pid>[.<hex>].tmp`, which names its process.
#pragma once

#include <cstddef>

#include "config.h"
#include "heapline/live_format.h"
#include "os.h"

namespace heapline {

// A live file made and mapped, not yet at its name.
struct PendingLiveFile {
  LiveRegion* region = nullptr;
  char temp_path[kMaxPath + 48] = {};
  os::FileId id;
};

// Makes a file with `image`'s content under a temporary name beside
// `final_path` and maps it: at `at` when given (MAP_FIXED, replacing the
// mapping there in one step for the threads that store into it), anywhere
// otherwise. Returns 0 or an errno; EFBIG, with nothing created, when the
// file size limit (RLIMIT_FSIZE) is below the file's size. Makes no
// allocation: safe inside the first malloc call.
int make_live_file(const LiveRegion& image, const char* final_path, int pid, LiveRegion* at, PendingLiveFile* out);

// Gives the pending file the name `final_path` when nothing is there:
// 0, EEXIST, or another errno.
int place_live_file(PendingLiveFile& file, const char* final_path);

// Removes the pending file's temporary name; its mapping stays (the caller
// unmaps it, or keeps it as memory).
void remove_pending_name(PendingLiveFile& file);

void release_live_region(LiveRegion* region);

}  // namespace heapline
