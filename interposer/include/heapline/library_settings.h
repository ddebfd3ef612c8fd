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
    "HEAPLINE_FOLLOW", "HEAPLINE_ROOT_PID",    "HEAPLINE_SAMPLE",    "HEAPLINE_SAMPLE_SEED", "HEAPLINE_RUN_ID",
    "HEAPLINE_TEST_KILL_WRITER",
};

// The library's own reading of a setting, from the table load_config reads
// the environment with (interposer/src/base/config.cpp; programs link it
// through heapline::format): a program that passes a HEAPLINE_* value on
// (heapline-bench's compare --env, a catalogue's env) refuses, before
// anything runs, a value the library would refuse and run with its default
// instead. 1: the library takes `text`; 0: it refuses it; -1: `name` is
// not one of its settings.
int read_setting_alone(const char* name, const char* text);
// What the library takes for the setting `name` ("whole milliseconds from
// 0 to 86400000"), as its own line says it; nullptr when `name` is not one.
const char* setting_rule(const char* name);

}  // namespace heapline
