// The live file (live_header.cpp): its mapping, its identity and name,
// claimed at init, created late for a process that is not the command,
// given up at an exec.
#pragma once

#include <cstdint>

#include "live_file.h"

#pragma GCC visibility push(hidden)
namespace heapline::accounting {

// The live file's mapping, or g_static_region when it could not be made:
// never null; changed only at init, at a deferred creation and in a fork
// child (under the sampling lock or single-threaded).
extern LiveRegion g_static_region;
extern LiveRegion* g_region;

bool is_root_process();
// Decides g_process.followed (HEAPLINE_FOLLOW) for this process; with
// follow=command and no HEAPLINE_ROOT_PID, the first process names itself
// the command for the processes it starts (`in_constructor`: only from the
// library's constructor, where setenv cannot race the program).
void decide_followed(bool in_constructor);
// Starts the heap line at `now` with `live` bytes: identity and first
// sample, and the live file (see live_header.cpp).
void open_live_file(std::uint64_t now, std::int64_t live);
// The live file of a process that is not the command (a fork child; with
// HEAPLINE_ROOT_PID, any other process) is created only once its heap
// reaches this floor: a shell's subshell, `basename` or `sed` that is killed
// (or execs a program the library cannot follow) leaves nothing.
constexpr std::int64_t kLiveFileFloor = 1 << 20;
// Called by take_sample (g_sampling.busy held) when `live` reached the floor.
void create_deferred_live_file();
// Removes the live file at live_path when that name still is this process's
// file (after the report is written, before an exec): never a file that
// another process put there. True when it was removed.
bool remove_live_file();
// exec (exec_override.cpp): the image that execs another gives up its live
// file (the new image, run under the library, makes its own: a wrapper such
// as env, nice or timeout leaves nothing behind), holding the sampling lock
// until the exec is done with; and gets it back when the exec failed.
// Nothing in a vfork child, whose live file is its parent's.
// Whether this process has a live file (or one due) that an exec would give
// up: cheap, asked first.
bool live_file_to_give_up();
bool retire_live_file_for_exec();
// The program an exec is about to start without the library, and why, into
// the live file's header (nullptr: cleared, the exec failed).
void note_exec_not_followed(const char* path, const char* why);
// Only after a retire_live_file_for_exec that returned true, whose lock it
// releases.
void restore_live_file_after_failed_exec();

}  // namespace heapline::accounting
#pragma GCC visibility pop
