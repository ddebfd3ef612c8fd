// The one way the launcher and heapline-bench read a JSON document (a
// heapline/1 report, a scenario catalogue, a release comparison, a line of
// a store's calibration file): what is wrong is one line that names the
// source and says what is wrong in the project's words, never the JSON
// library's own message ("[json.exception.parse_error.101] parse error at
// line 1, column 1: syntax error while parsing value - unexpected end of
// input; expected '[', '{', or a literal"):
//   SOURCE: empty, not WHAT
//   SOURCE: only white space, not WHAT
//   SOURCE: cut short (its JSON ends at byte N, inside a value), not WHAT
//   SOURCE: not JSON (a syntax error at byte N), not WHAT
//   SOURCE: not JSON this reader takes (a number beyond any double), not WHAT
//   SOURCE: an array at the top level, not WHAT (a JSON object)
//   SOURCE: field "peak_profile.time_ns" appears twice, not WHAT
// (a key twice in one object: which value counts would depend on the
// reader, Python's json takes the last, simdjson the first; none is taken)
// and a field of the wrong type, through json_field, names the field:
//   field "command" must be an array of strings, got a string
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace heapline {

enum class JsonProblem { kNone, kEmpty, kBlank, kCut, kSyntax, kNumberRange, kWrongType, kKeyTwice };

struct JsonDocument {
  nlohmann::json value;
  JsonProblem problem = JsonProblem::kNone;
  std::string error;  // "SOURCE: what is wrong, not WHAT"; empty when read
  explicit operator bool() const { return problem == JsonProblem::kNone; }
};

// "an object", "an array", "a string"...: a value's JSON type, as a line says it.
inline std::string json_type_name(const nlohmann::json& value) {
  switch (value.type()) {
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "a whole number";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "a value of another kind";
  }
}

namespace json_detail {

// Watches a parse (nlohmann's parser callback) for a key that appears twice
// in one object, and throws it named by its path ("peak_profile.time_ns",
// "sites[2].frames"): the one rule, no key twice, for every reader of a
// JSON document.
class KeyTwiceWatch {
 public:
  struct Found {
    std::string path;
  };
  bool operator()(int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    switch (event) {
      case Event::object_start:
      case Event::array_start:
        frames_.push_back(Frame{event == Event::object_start, {}, {}, 0});
        break;
      case Event::key: {
        Frame& object = frames_.back();
        object.key = parsed.get<std::string>();
        if (!object.keys.insert(object.key).second) throw Found{path()};
        break;
      }
      case Event::object_end:
      case Event::array_end:
        frames_.pop_back();
        [[fallthrough]];
      case Event::value:
        if (!frames_.empty() && !frames_.back().object) ++frames_.back().index;
        break;
    }
    return true;
  }

 private:
  struct Frame {
    bool object;
    std::set<std::string> keys;
    std::string key;    // an object's: the key of the value being read
    std::size_t index;  // an array's: the index of the value being read
  };
  std::string path() const {
    std::string path;
    for (const Frame& frame : frames_) {
      if (frame.object) {
        path += (path.empty() ? "" : ".") + frame.key;
      } else {
        path += "[" + std::to_string(frame.index) + "]";
      }
    }
    return path;
  }
  std::vector<Frame> frames_;
};

}  // namespace json_detail

// `text`, read from `source`, as a document whose top level is an object
// (`want_object`) or an array; `what` is what it should be ("a scenario
// catalogue").
inline JsonDocument read_json_document(std::string_view text, const std::string& source, const std::string& what,
                                       bool want_object = true) {
  JsonDocument document;
  auto refuse = [&](JsonProblem problem, const std::string& said) {
    document.problem = problem;
    document.error = source + ": " + said + ", not " + what;
    document.value = nullptr;
    return document;
  };
  if (text.empty()) return refuse(JsonProblem::kEmpty, "empty");
  if (text.find_first_not_of(" \t\r\n") == std::string_view::npos) return refuse(JsonProblem::kBlank, "only white space");
  try {
    document.value = nlohmann::json::parse(text, json_detail::KeyTwiceWatch());
  } catch (const json_detail::KeyTwiceWatch::Found& twice) {
    return refuse(JsonProblem::kKeyTwice, "field \"" + twice.path + "\" appears twice");
  } catch (const nlohmann::json::parse_error& error) {
    // The parser reports the byte after the last it read: past the last
    // byte that is not white space, the text ended inside a value.
    const std::size_t last = text.find_last_not_of(" \t\r\n");
    if (error.byte > last + 1) {
      return refuse(JsonProblem::kCut, "cut short (its JSON ends at byte " + std::to_string(last + 1) + ", inside a value)");
    }
    return refuse(JsonProblem::kSyntax, "not JSON (a syntax error at byte " + std::to_string(error.byte) + ")");
  } catch (const nlohmann::json::exception&) {  // a number beyond any double (1e999)
    return refuse(JsonProblem::kNumberRange, "not JSON this reader takes (a number beyond any double)");
  }
  if (want_object ? !document.value.is_object() : !document.value.is_array()) {
    const std::string type = json_type_name(document.value);
    refuse(JsonProblem::kWrongType, "");
    document.error = source + ": " + type + " at the top level, not " + what + " (a JSON " +
                     (want_object ? "object" : "array") + ")";
    return document;
  }
  return document;
}

// A field that is not what its reader takes: what() is one line naming it.
class JsonFieldError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace json_detail {

template <typename T>
struct Kind {
  static bool holds(const nlohmann::json& v) {
    if constexpr (std::is_same_v<T, std::string>) {
      return v.is_string();
    } else if constexpr (std::is_same_v<T, bool>) {
      return v.is_boolean();
    } else if constexpr (std::is_integral_v<T>) {
      return v.is_number_integer();
    } else {
      static_assert(std::is_floating_point_v<T>);
      return v.is_number();
    }
  }
  // What one value of T is, and what several are ("a whole number", "whole numbers").
  static std::string name() {
    if constexpr (std::is_same_v<T, std::string>) {
      return "a string";
    } else if constexpr (std::is_same_v<T, bool>) {
      return "true or false";
    } else if constexpr (std::is_integral_v<T>) {
      return "a whole number";
    } else {
      return "a number";
    }
  }
  static std::string plural() {
    if constexpr (std::is_same_v<T, std::string>) {
      return "strings";
    } else if constexpr (std::is_same_v<T, bool>) {
      return "values true or false";
    } else if constexpr (std::is_integral_v<T>) {
      return "whole numbers";
    } else {
      return "numbers";
    }
  }
  // What `v` is, as a refusal says it.
  static std::string got(const nlohmann::json& v) { return json_type_name(v); }
  // Whether a value `holds` accepted fits in T: nlohmann's get<int>() of
  // 10000000000 or of -1 for an unsigned converts it without a word.
  static bool fits(const nlohmann::json& v) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (v.is_number_unsigned()) {
        return v.get<std::uint64_t>() <= static_cast<std::uint64_t>(std::numeric_limits<T>::max());
      }
      const std::int64_t value = v.get<std::int64_t>();
      if constexpr (std::is_unsigned_v<T>) {
        return value >= 0 && static_cast<std::uint64_t>(value) <= std::numeric_limits<T>::max();
      } else {
        return value >= std::numeric_limits<T>::min() && value <= std::numeric_limits<T>::max();
      }
    } else {
      (void)v;
      return true;
    }
  }
};
template <typename T>
struct Kind<std::vector<T>> {
  static bool holds(const nlohmann::json& v) {
    if (!v.is_array()) return false;
    for (const auto& each : v)
      if (!Kind<T>::holds(each)) return false;
    return true;
  }
  static bool fits(const nlohmann::json& v) {
    for (const auto& each : v)
      if (!Kind<T>::fits(each)) return false;
    return true;
  }
  // What `v` is, down to the part that is not a T ("an array holding a whole number").
  static std::string got(const nlohmann::json& v) {
    if (v.is_array())
      for (const auto& each : v)
        if (!Kind<T>::holds(each)) return "an array holding " + Kind<T>::got(each);
    return json_type_name(v);
  }
  static std::string name() { return "an array of " + Kind<T>::plural(); }
  static std::string plural() { return "arrays of " + Kind<T>::plural(); }
};
template <typename T>
struct Kind<std::map<std::string, T>> {
  static bool holds(const nlohmann::json& v) {
    if (!v.is_object()) return false;
    for (const auto& [key, each] : v.items())
      if (!Kind<T>::holds(each)) return false;
    return true;
  }
  static bool fits(const nlohmann::json& v) {
    for (const auto& [key, each] : v.items())
      if (!Kind<T>::fits(each)) return false;
    return true;
  }
  static std::string got(const nlohmann::json& v) {
    if (v.is_object())
      for (const auto& [key, each] : v.items())
        if (!Kind<T>::holds(each)) return "an object holding " + Kind<T>::got(each);
    return json_type_name(v);
  }
  static std::string name() { return "an object of " + Kind<T>::plural(); }
  static std::string plural() { return "objects of " + Kind<T>::plural(); }
};

}  // namespace json_detail

// The field `key` of `object` as a T (a string, a number, a whole number,
// true or false, an array or an object of those); `fallback` when it is
// missing and one is given, else JsonFieldError: 'field "KEY" is missing' or
// 'field "KEY" must be an array of strings, got a string'.
template <typename T>
T json_field(const nlohmann::json& object, const std::string& key, const T* fallback = nullptr) {
  const auto found = object.find(key);
  if (found == object.end()) {
    if (fallback != nullptr) return *fallback;
    throw JsonFieldError("field \"" + key + "\" is missing");
  }
  if (!json_detail::Kind<T>::holds(*found)) {
    throw JsonFieldError("field \"" + key + "\" must be " + json_detail::Kind<T>::name() + ", got " +
                         json_detail::Kind<T>::got(*found));
  }
  if (!json_detail::Kind<T>::fits(*found)) throw JsonFieldError("field \"" + key + "\" is out of range");
  return found->template get<T>();
}

// What a field reader that walks a document with nlohmann's own accessors
// (at(), get()) says of `error`, in the project's words rather than the
// library's ("[json.exception.out_of_range.403] key 'x' not found"):
// 'field "x" is missing', 'a field must be an array, got a string', ...
inline std::string json_library_problem(const nlohmann::json::exception& error) {
  const std::string text = error.what();
  const std::size_t tag_end = text.find("] ");
  const std::string said = tag_end == std::string::npos ? text : text.substr(tag_end + 2);
  if (error.id == 403) {  // key 'KEY' not found
    const std::size_t open = said.find('\'');
    const std::size_t close = open == std::string::npos ? open : said.find('\'', open + 1);
    if (close != std::string::npos) return "field \"" + said.substr(open + 1, close - open - 1) + "\" is missing";
    return "a field is missing";
  }
  if (error.id == 302) {  // type must be X, but is Y
    const std::size_t must = said.find("type must be ");
    const std::size_t but = said.find(", but is ");
    if (must != std::string::npos && but != std::string::npos)
      return "a field must be " + said.substr(must + 13, but - must - 13) + ", got " + said.substr(but + 9);
  }
  if (error.id == 401) return "an array is shorter than its reader takes";
  return "a field is not what its reader takes";
}

}  // namespace heapline
