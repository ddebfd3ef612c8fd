#include "profile_output.h"

#include <cstring>

namespace heapline {

namespace {

// A byte figure from a double: rounded, and 0 for what no writer leaves
// (negative, NaN, beyond 2^62).
std::int64_t whole_bytes(double value) {
  if (!(value >= 0) || value > 4.6e18) return 0;
  return static_cast<std::int64_t>(value + 0.5);
}

double square_root(double x) {
  if (!(x > 0)) return 0;
#if defined(__x86_64__)
  double root;
  asm("sqrtsd %1, %0" : "=x"(root) : "x"(x));
  return root;
#else
  double root = x > 1 ? x : 1;
  for (int i = 0; i < 80; ++i) root = 0.5 * (root + x / root);
  return root;
#endif
}

void append_estimate(TextSink& sink, double bytes, double variance) {
  sink.append("\"bytes\":");
  sink.append_signed(whole_bytes(bytes));
  sink.append(",\"error_bytes\":");
  sink.append_signed(whole_bytes(kProfileErrorSigmas * square_root(variance)));
}

void append_site_counts(TextSink& sink, const ProfileSite& site) {
  append_estimate(sink, site.bytes, site.variance);
  sink.append(",\"samples\":");
  sink.append_unsigned(site.samples);
  sink.append(",\"sampled_bytes\":");
  sink.append_unsigned(site.sampled_bytes);
}

void append_profile(TextSink& sink, const ProfileSnapshot* profile) {
  if (profile == nullptr || profile->state != kProfileTaken) {
    sink.append("null");
    return;
  }
  const std::uint32_t modules = profile->module_count < kProfileModules ? profile->module_count : kProfileModules;
  const std::uint32_t sites = profile->site_count < kProfileSites ? profile->site_count : kProfileSites;
  sink.append("{\"time_ns\":");
  sink.append_unsigned(profile->time_ns);
  sink.append(",\"heap_bytes\":");
  sink.append_signed(profile->heap_bytes);
  sink.append(",\"mean_bytes\":");
  sink.append_unsigned(profile->mean_bytes);
  sink.append(",\"live_samples\":");
  sink.append_unsigned(profile->live_samples);
  sink.append(",\"stacks\":");
  sink.append_unsigned(profile->stacks);
  sink.append(',');
  append_estimate(sink, profile->total_bytes, profile->total_variance);
  sink.append(",\n\"sites\":[");
  for (std::uint32_t i = 0; i < sites; ++i) {
    const ProfileSite& site = profile->sites[i];
    sink.append(i == 0 ? "\n{" : ",\n{");
    append_site_counts(sink, site);
    sink.append(",\"frames\":[");
    const std::uint32_t frames = site.frame_count < kProfileFrames ? site.frame_count : kProfileFrames;
    for (std::uint32_t f = 0; f < frames; ++f) {
      const ProfileFrame& frame = site.frames[f];
      sink.append(f == 0 ? "[" : ",[");
      sink.append_signed(frame.module < modules ? static_cast<std::int64_t>(frame.module) : -1);
      sink.append(',');
      sink.append_unsigned(frame.address);
      sink.append(']');
    }
    sink.append("]}");
  }
  sink.append("],\n\"other\":{");
  append_site_counts(sink, profile->other);
  sink.append(",\"sites\":");
  sink.append_unsigned(profile->other_sites);
  sink.append("},\n\"modules\":[");
  static const char kHex[] = "0123456789abcdef";
  for (std::uint32_t m = 0; m < modules; ++m) {
    const ProfileModule& module = profile->modules[m];
    char path[kProfilePathBytes];
    std::memcpy(path, module.path, sizeof path);
    path[sizeof path - 1] = 0;  // a damaged file may lack the NUL
    sink.append(m == 0 ? "\n{\"path\":" : ",\n{\"path\":");
    sink.append_json_string(path);
    sink.append(",\"build_id\":\"");
    const std::uint32_t id_bytes = module.build_id_bytes <= kProfileBuildIdBytes ? module.build_id_bytes : 0;
    for (std::uint32_t b = 0; b < id_bytes; ++b) {
      sink.append(kHex[module.build_id[b] >> 4]);
      sink.append(kHex[module.build_id[b] & 15]);
    }
    sink.append("\"}");
  }
  sink.append("]}");
}

}  // namespace

void write_sampling_json(TextSink& sink, const SamplingReport& s) {
  sink.append(",\n\"sampling\":{\"mean_bytes\":");
  sink.append_unsigned(s.mean_bytes);
  sink.append(",\"unwinder\":");
  sink.append_json_string(s.unwinder != nullptr ? s.unwinder : "none");
  sink.append(",\"samples\":");
  sink.append_unsigned(s.samples);
  sink.append(",\"dropped\":");
  sink.append_unsigned(s.dropped);
  sink.append(",\"live_capacity\":");
  sink.append_unsigned(s.live_capacity);
  sink.append(",\"stack_capacity\":");
  sink.append_unsigned(s.stack_capacity);
  sink.append(",\"snapshots\":");
  sink.append_unsigned(s.snapshots);
  sink.append("},\n\"peak_profile\":");
  append_profile(sink, s.peak_profile);
  sink.append(",\n\"exit_profile\":");
  append_profile(sink, s.exit_profile);
}

}  // namespace heapline
