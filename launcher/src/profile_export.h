// A heap profile (heapline/report_reader.h), named (symbolizer.h), as the
// reader wants it: text for a person, folded stacks for flame graphs
// (flamegraph.pl, speedscope, inferno: "outermost;...;innermost BYTES"),
// or pprof's profile.proto, gzipped, for `go tool pprof`.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include <heapline/report_reader.h>

#include "symbolizer.h"

namespace heapline::launcher {

struct NamedSite {
  const ProfileSiteData* site;
  std::vector<FrameName> frames;  // innermost first
  // The innermost frame and its caller: "site_a (x.cpp:40) < worker (x.cpp:90)".
  std::string where() const;
};

std::vector<NamedSite> name_sites(const ProfileData& profile, Symbolizer& symbolizer);

// "58.0 MiB ± 6.0 MiB" (the estimate and three standard errors).
std::string estimate_text(std::int64_t bytes, std::int64_t error_bytes);

// One line per site, largest first (at most `max_sites`), each with its
// stack below it when `with_stacks`, else its caller (and the callers past
// it up to the first with a name); then the other sites, summed. A site
// that mapped memory says "(mapped)". `dropped`: the samples the process's
// sampler could not keep (SamplingData::dropped), said after the title when
// there were any: the estimates leave them out.
std::string profile_text(const ProfileData& profile, const std::vector<NamedSite>& sites,
                         const std::string& title, std::size_t max_sites, bool with_stacks,
                         std::uint64_t dropped);

// "root;outermost;...;innermost BYTES" per site (estimated bytes, rounded).
std::string profile_folded(const std::vector<NamedSite>& sites, const std::string& root);

// profile.proto (github.com/google/pprof/proto/profile.proto), gzipped:
// sample types inuse_space (bytes, the estimate) and samples (count), one
// sample per site and one for the other sites together; every location
// carries its function and line, so pprof needs no binaries to read it.
std::string profile_pprof(const ProfileData& profile, const std::vector<NamedSite>& sites);

}  // namespace heapline::launcher
