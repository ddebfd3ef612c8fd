// The heap sampler's part of the heapline/1 report as JSON (profile_format.h
// says what it holds): written without allocation, by the library at exit
// and by `heapline convert` from a live file's copy.
#pragma once

#include "heapline/profile_format.h"
#include "text.h"

namespace heapline {

// ,"sampling":{...},"peak_profile":{...}|null,"exit_profile":{...}|null
// Every count and index read from a snapshot is clamped to its capacity,
// so a snapshot copied from a damaged or crafted file writes a valid
// (if meaningless) profile, never a read out of bounds.
void write_sampling_json(TextSink& sink, const SamplingReport& sampling);

}  // namespace heapline
