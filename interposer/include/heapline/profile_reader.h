// Reading a heapline/1 report's profiles back (the launcher's side of
// heapline/profile_format.h): "sampling", "peak_profile" and
// "exit_profile", as typed values. Bad input is refused with one line that
// names the file and the field, never half read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace heapline::format {

struct ProfileModuleData {
  std::string path;
  std::string build_id;  // lowercase hex; empty when the module had none
};

struct ProfileFrameData {
  int module = -1;            // index into Profile::modules; -1: none (a raw address)
  std::uint64_t address = 0;  // in the module's ELF file (return addresses)
};

struct ProfileSiteData {
  std::int64_t bytes = 0;        // estimated
  std::int64_t error_bytes = 0;  // three standard errors
  std::uint64_t samples = 0;
  std::uint64_t sampled_bytes = 0;
  std::vector<ProfileFrameData> frames;  // innermost first
};

struct ProfileData {
  std::uint64_t time_ns = 0;
  std::int64_t heap_bytes = 0;
  std::uint64_t mean_bytes = 0;
  std::uint64_t live_samples = 0;
  std::uint64_t stacks = 0;
  std::int64_t bytes = 0;
  std::int64_t error_bytes = 0;
  std::vector<ProfileSiteData> sites;  // largest first
  ProfileSiteData other;               // the sites past the top ones, summed (no frames)
  std::uint64_t other_sites = 0;
  std::vector<ProfileModuleData> modules;
};

struct SamplingData {
  std::uint64_t mean_bytes = 0;  // 0: sampling was off
  std::string unwinder;
  std::uint64_t samples = 0;
  std::uint64_t dropped = 0;
  std::optional<ProfileData> peak_profile;  // none: no sample was live at a peak
  std::optional<ProfileData> exit_profile;
};

// The report's sampler part; nullopt for a report without one (a library
// older than the sampler). Throws std::runtime_error("FILE: FIELD: what is
// wrong") for a part that is there but malformed.
std::optional<SamplingData> read_sampling(const nlohmann::json& report, const std::string& file);

}  // namespace heapline::format
