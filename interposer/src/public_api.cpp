// The public API's exported symbols (include/heapline.h wraps them so that a
// program runs unchanged without libheapline.so). Versioned names: a later
// incompatible change adds heapline_v2_* beside these.
#include <cstdint>

#include "accounting.h"

#define HEAPLINE_EXPORT extern "C" __attribute__((visibility("default")))

HEAPLINE_EXPORT void heapline_v1_mark(const char* name) noexcept { heapline::accounting::api_mark(name); }
HEAPLINE_EXPORT std::int64_t heapline_v1_live_bytes() noexcept { return heapline::accounting::api_live_bytes(); }
HEAPLINE_EXPORT std::int64_t heapline_v1_peak_bytes() noexcept { return heapline::accounting::api_peak_bytes(); }
HEAPLINE_EXPORT void heapline_v1_reset_peak() noexcept { heapline::accounting::api_reset_peak(); }
