// The environment variables libheapline.so reads: its settings
// (docs/usage.md, "The library on its own"; the launcher sets some of them
// for its command). interposer/src/base/config.cpp's table reads exactly
// these (tree.library_settings holds the two equal), so a program that
// must not pass the caller's settings on (heapline-bench's measured runs)
// knows which they are, and no other HEAPLINE_ variable of a script.
#pragma once

namespace heapline {

inline constexpr const char* kLibrarySettings[] = {
    "HEAPLINE_OUT",    "HEAPLINE_INTERVAL_MS", "HEAPLINE_PRECISION", "HEAPLINE_SUMMARY",     "HEAPLINE_MAPPED",
    "HEAPLINE_FOLLOW", "HEAPLINE_ROOT_PID",    "HEAPLINE_SAMPLE",    "HEAPLINE_SAMPLE_SEED", "HEAPLINE_TEST_KILL_WRITER",
};

}  // namespace heapline
