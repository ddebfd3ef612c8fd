#include "profile_export.h"

#include <zlib.h>

#include <map>
#include <stdexcept>

#include <heapline/figures.h>

#include "report_summary.h"

namespace heapline::launcher {

std::string NamedSite::where() const {
  if (frames.empty()) return "(no stack: allocated before libunwind was loaded, or without it)";
  std::string text = frames[0].text();
  if (frames.size() > 1) text += " < " + frames[1].text();
  return text;
}

std::vector<NamedSite> name_sites(const ProfileData& profile, Symbolizer& symbolizer) {
  std::vector<NamedSite> sites;
  for (const ProfileSiteData& site : profile.sites) {
    NamedSite named{&site, {}};
    for (const ProfileFrameData& frame : site.frames) named.frames.push_back(symbolizer.name(profile, frame));
    sites.push_back(std::move(named));
  }
  return sites;
}

std::string estimate_text(std::int64_t bytes, std::int64_t error_bytes) {
  return human_bytes(bytes) + " \u00b1 " + human_bytes(error_bytes);
}

std::string profile_text(const ProfileData& profile, const std::vector<NamedSite>& sites,
                         const std::string& title, std::size_t max_sites, bool with_stacks,
                         std::uint64_t dropped) {
  // A profile that follows heap + mapped says both (older ones: the heap).
  const std::string held = profile.mapped_bytes != 0 ? "heap " + human_bytes(profile.heap_bytes) + " + mapped " +
                                                          human_bytes(profile.mapped_bytes)
                                                    : "heap " + human_bytes(profile.heap_bytes);
  std::string text = title + " at " + human_seconds(static_cast<std::int64_t>(profile.time_ns)) + ": " + held +
                     "; the sampled sites estimate " +
                     estimate_text(profile.bytes, profile.error_bytes) + " (" + std::to_string(profile.live_samples) +
                     " live samples, one per " + human_bytes(static_cast<std::int64_t>(profile.mean_bytes)) +
                     " on average; errors are three standard errors)\n";
  if (dropped > 0) {
    // A sample the sampler could not keep (its live set full, or no room
    // to wait) is in no site: the estimates made while it was missing are
    // low, by more than their stated errors.
    text += "  the process's sampler dropped " + std::to_string(dropped) + " sample" + (dropped == 1 ? "" : "s") +
            " (its live set was full, or it was busy): the sites leave them out, so their estimates may be low\n";
  }
  std::size_t shown = 0;
  BytesSum rest_bytes(profile.other.bytes);
  std::uint64_t rest_sites = profile.other_sites;
  for (const NamedSite& named : sites) {
    if (shown == max_sites) {
      rest_bytes += named.site->bytes;
      ++rest_sites;
      continue;
    }
    ++shown;
    char head[160];
    std::snprintf(head, sizeof head, "  %24s  %5llu samples  ", estimate_text(named.site->bytes, named.site->error_bytes).c_str(),
                  static_cast<unsigned long long>(named.site->samples));
    // A frame's names are the binary's and its debug file's: any bytes.
    text += std::string(head) + (named.site->mapped ? "(mapped) " : "") +
            terminal_text(named.frames.empty() ? named.where() : named.frames[0].text()) + "\n";
    if (with_stacks) {
      for (std::size_t f = 1; f < named.frames.size(); ++f) {
        text += std::string(44, ' ') + "< " + terminal_text(named.frames[f].text()) + "\n";
      }
    } else if (named.frames.size() > 1) {
      // The caller, and past callers without a name (a stripped program's
      // own functions) up to the first that has one: what the site is for.
      std::string callers = "< " + terminal_text(named.frames[1].text());
      for (std::size_t f = 2; f < named.frames.size() && named.frames[f - 1].function.empty(); ++f) {
        callers += " < " + terminal_text(named.frames[f].text());
      }
      text += std::string(44, ' ') + callers + "\n";
    }
  }
  if (rest_sites > 0) {
    text += "  " + human_bytes(rest_bytes.bytes()) + " in " + std::to_string(rest_sites) + " other site" +
            (rest_sites == 1 ? "" : "s") + "\n";
  }
  return text;
}

std::string profile_folded(const std::vector<NamedSite>& sites, const std::string& root) {
  std::string text;
  for (const NamedSite& named : sites) {
    if (named.site->bytes <= 0) continue;
    std::string line = root;
    for (char& c : line) {
      if (c == ';') c = ',';
    }
    for (auto frame = named.frames.rbegin(); frame != named.frames.rend(); ++frame) {
      // As a terminal shows it (no control character, so no line break),
      // and without the format's frame separator.
      std::string element = terminal_text(frame->short_text());
      for (char& c : element) {
        if (c == ';') c = ',';
      }
      line += ";" + element;
    }
    text += line + " " + std::to_string(named.site->bytes) + "\n";
  }
  return text;
}

namespace {

// The protocol buffers wire format, by hand (profile.proto needs varints,
// length-delimited fields and packed repeated varints).
class Message {
 public:
  void varint(std::uint64_t value) {
    while (value >= 0x80) {
      bytes_ += static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    bytes_ += static_cast<char>(value);
  }
  void number(int field, std::uint64_t value) {
    if (value == 0) return;  // proto3: a zero is not written
    varint(static_cast<std::uint64_t>(field) << 3);
    varint(value);
  }
  void bytes(int field, const std::string& value) {
    varint((static_cast<std::uint64_t>(field) << 3) | 2);
    varint(value.size());
    bytes_ += value;
  }
  void message(int field, const Message& value) { bytes(field, value.bytes_); }
  void packed(int field, const std::vector<std::uint64_t>& values) {
    Message inner;
    for (std::uint64_t value : values) inner.varint(value);
    bytes(field, inner.bytes_);
  }
  const std::string& data() const { return bytes_; }

 private:
  std::string bytes_;
};

class Strings {
 public:
  Strings() { index(""); }
  std::uint64_t index(const std::string& text) {
    auto [found, added] = indices_.emplace(text, order_.size());
    if (added) order_.push_back(text);
    return found->second;
  }
  const std::vector<std::string>& all() const { return order_; }

 private:
  std::map<std::string, std::uint64_t> indices_;
  std::vector<std::string> order_;
};

std::string gzipped(const std::string& data) {
  z_stream stream{};
  if (deflateInit2(&stream, Z_BEST_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    throw std::runtime_error("zlib: cannot start compressing");
  }
  std::string out(deflateBound(&stream, data.size()) + 32, '\0');
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  stream.avail_in = static_cast<uInt>(data.size());
  stream.next_out = reinterpret_cast<Bytef*>(out.data());
  stream.avail_out = static_cast<uInt>(out.size());
  const int result = deflate(&stream, Z_FINISH);
  deflateEnd(&stream);
  if (result != Z_STREAM_END) throw std::runtime_error("zlib: cannot compress the profile");
  out.resize(stream.total_out);
  return out;
}

}  // namespace

std::string profile_pprof(const ProfileData& profile, const std::vector<NamedSite>& sites) {
  Strings strings;
  Message out;
  auto value_type = [&](const char* type, const char* unit) {
    Message message;
    message.number(1, strings.index(type));
    message.number(2, strings.index(unit));
    return message;
  };
  out.message(1, value_type("inuse_space", "bytes"));
  out.message(1, value_type("samples", "count"));

  // One mapping per module, at made-up disjoint addresses (the process's
  // own are gone): location addresses are the module's ELF addresses there.
  constexpr std::uint64_t kMappingSpan = std::uint64_t{1} << 40;
  for (std::size_t m = 0; m < profile.modules.size(); ++m) {
    Message mapping;
    mapping.number(1, m + 1);
    mapping.number(2, (m + 1) * kMappingSpan);
    mapping.number(3, (m + 2) * kMappingSpan);
    mapping.number(5, strings.index(profile.modules[m].path));
    mapping.number(6, strings.index(profile.modules[m].build_id));
    mapping.number(7, 1);  // has_functions
    mapping.number(8, 1);  // has_filenames
    mapping.number(9, 1);  // has_line_numbers
    out.message(3, mapping);
  }

  std::map<std::string, std::uint64_t> functions;  // name + file -> id
  std::map<std::pair<int, std::uint64_t>, std::uint64_t> locations;
  std::vector<Message> function_messages, location_messages;
  auto function_id = [&](const std::string& name, const std::string& file) {
    auto [found, added] = functions.emplace(name + '\0' + file, functions.size() + 1);
    if (added) {
      Message function;
      function.number(1, found->second);
      function.number(2, strings.index(name));
      function.number(3, strings.index(name));
      function.number(4, strings.index(file));
      function_messages.push_back(function);
    }
    return found->second;
  };
  auto location_id = [&](int module, std::uint64_t address, const FrameName& frame) {
    auto [found, added] = locations.emplace(std::make_pair(module, address), locations.size() + 1);
    if (added) {
      Message location;
      location.number(1, found->second);
      if (module >= 0) {
        location.number(2, static_cast<std::uint64_t>(module) + 1);
        location.number(3, (static_cast<std::uint64_t>(module) + 1) * kMappingSpan + address);
      } else {
        location.number(3, address);
      }
      Message line;
      line.number(1, function_id(frame.short_text(), frame.file));
      line.number(2, static_cast<std::uint64_t>(frame.line > 0 ? frame.line : 0));
      location.message(4, line);
      location_messages.push_back(location);
    }
    return found->second;
  };

  auto add_sample = [&](const std::vector<std::uint64_t>& location_ids, std::int64_t bytes, std::uint64_t samples) {
    Message sample;
    sample.packed(1, location_ids);
    sample.packed(2, {static_cast<std::uint64_t>(bytes), samples});  // int64 values, never negative here
    out.message(2, sample);
  };
  for (const NamedSite& named : sites) {
    if (named.site->bytes <= 0) continue;
    std::vector<std::uint64_t> ids;
    for (std::size_t f = 0; f < named.frames.size(); ++f) {
      const ProfileFrameData& frame = named.site->frames[f];
      ids.push_back(location_id(frame.module, frame.address, named.frames[f]));
    }
    if (ids.empty()) ids.push_back(location_id(-1, 0, FrameName{"(no stack)", "", 0, "?", 0}));
    add_sample(ids, named.site->bytes, named.site->samples);
  }
  if (profile.other.bytes > 0) {
    add_sample({location_id(-1, 1, FrameName{"(" + std::to_string(profile.other_sites) + " other sites)", "", 0, "?", 1})},
               profile.other.bytes, profile.other.samples);
  }
  for (const Message& location : location_messages) out.message(4, location);
  for (const Message& function : function_messages) out.message(5, function);
  // Every string is indexed before the table is written.
  const Message period_type = value_type("space", "bytes");
  const std::uint64_t default_type = strings.index("inuse_space");
  for (const std::string& text : strings.all()) out.bytes(6, text);
  out.message(11, period_type);
  out.number(12, profile.mean_bytes);
  out.number(14, default_type);
  return gzipped(out.data());
}

}  // namespace heapline::launcher
