#include "heapline/profile_reader.h"

#include <stdexcept>

#include <nlohmann/json.hpp>

namespace heapline::format {

namespace {

using nlohmann::json;

class Reader {
 public:
  explicit Reader(const std::string& file) : file_(file) {}

  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw std::runtime_error(file_ + ": " + field + ": " + what);
  }

  const json& member(const json& object, const char* name, const std::string& where) const {
    if (!object.is_object()) fail(where, "not an object");
    auto found = object.find(name);
    if (found == object.end()) fail(where + "." + name, "missing");
    return *found;
  }

  std::uint64_t unsigned_number(const json& object, const char* name, const std::string& where) const {
    const json& value = member(object, name, where);
    if (!value.is_number_unsigned()) fail(where + "." + name, "not a non-negative integer");
    return value.get<std::uint64_t>();
  }

  std::int64_t byte_figure(const json& object, const char* name, const std::string& where) const {
    const json& value = member(object, name, where);
    if (!value.is_number_integer()) fail(where + "." + name, "not an integer");
    return value.get<std::int64_t>();
  }

  ProfileSiteData site(const json& object, const std::string& where, bool with_frames, std::size_t modules) const {
    ProfileSiteData site;
    site.bytes = byte_figure(object, "bytes", where);
    site.error_bytes = byte_figure(object, "error_bytes", where);
    site.samples = unsigned_number(object, "samples", where);
    site.sampled_bytes = unsigned_number(object, "sampled_bytes", where);
    if (!with_frames) return site;
    const json& frames = member(object, "frames", where);
    if (!frames.is_array()) fail(where + ".frames", "not an array");
    for (std::size_t f = 0; f < frames.size(); ++f) {
      const json& frame = frames[f];
      const std::string at = where + ".frames[" + std::to_string(f) + "]";
      if (!frame.is_array() || frame.size() != 2 || !frame[0].is_number_integer() || !frame[1].is_number_unsigned()) {
        fail(at, "not [module, address]");
      }
      const std::int64_t module = frame[0].get<std::int64_t>();
      if (module < -1 || module >= static_cast<std::int64_t>(modules)) fail(at, "module index out of range");
      site.frames.push_back({static_cast<int>(module), frame[1].get<std::uint64_t>()});
    }
    return site;
  }

  std::optional<ProfileData> profile(const json& report, const char* name) const {
    auto found = report.find(name);
    if (found == report.end() || found->is_null()) return std::nullopt;
    const json& object = *found;
    const std::string where = name;
    ProfileData profile;
    profile.time_ns = unsigned_number(object, "time_ns", where);
    profile.heap_bytes = byte_figure(object, "heap_bytes", where);
    profile.mean_bytes = unsigned_number(object, "mean_bytes", where);
    profile.live_samples = unsigned_number(object, "live_samples", where);
    profile.stacks = unsigned_number(object, "stacks", where);
    profile.bytes = byte_figure(object, "bytes", where);
    profile.error_bytes = byte_figure(object, "error_bytes", where);
    const json& modules = member(object, "modules", where);
    if (!modules.is_array()) fail(where + ".modules", "not an array");
    for (std::size_t m = 0; m < modules.size(); ++m) {
      const std::string at = where + ".modules[" + std::to_string(m) + "]";
      const json& path = member(modules[m], "path", at);
      const json& build_id = member(modules[m], "build_id", at);
      if (!path.is_string() || !build_id.is_string()) fail(at, "path and build_id must be strings");
      profile.modules.push_back({path.get<std::string>(), build_id.get<std::string>()});
    }
    const json& sites = member(object, "sites", where);
    if (!sites.is_array()) fail(where + ".sites", "not an array");
    for (std::size_t i = 0; i < sites.size(); ++i) {
      profile.sites.push_back(site(sites[i], where + ".sites[" + std::to_string(i) + "]", true, profile.modules.size()));
    }
    const json& other = member(object, "other", where);
    profile.other = site(other, where + ".other", false, 0);
    profile.other_sites = unsigned_number(other, "sites", where + ".other");
    return profile;
  }

 private:
  const std::string& file_;
};

}  // namespace

std::optional<SamplingData> read_sampling(const nlohmann::json& report, const std::string& file) {
  if (!report.is_object()) throw std::runtime_error(file + ": not a heapline/1 report (not a JSON object)");
  auto found = report.find("sampling");
  if (found == report.end()) return std::nullopt;
  const Reader reader(file);
  SamplingData data;
  data.mean_bytes = reader.unsigned_number(*found, "mean_bytes", "sampling");
  const json& unwinder = reader.member(*found, "unwinder", "sampling");
  if (!unwinder.is_string()) reader.fail("sampling.unwinder", "not a string");
  data.unwinder = unwinder.get<std::string>();
  data.samples = reader.unsigned_number(*found, "samples", "sampling");
  data.dropped = reader.unsigned_number(*found, "dropped", "sampling");
  data.peak_profile = reader.profile(report, "peak_profile");
  data.exit_profile = reader.profile(report, "exit_profile");
  return data;
}

}  // namespace heapline::format
