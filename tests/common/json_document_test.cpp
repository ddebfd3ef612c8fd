// heapline/json_document.h: the one reader of a JSON document. What is
// wrong is said in the project's words, naming the source and the field;
// never the JSON library's own text, never a value converted to a type it
// does not fit.
#include <heapline/json_document.h>

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace heapline {
namespace {

std::string error_of(const std::string& text, bool want_object = true) {
  return read_json_document(text, "f.json", "a thing", want_object).error;
}

TEST(JsonDocument, WhatIsNotADocumentIsSaidInTheProjectsWords) {
  EXPECT_EQ(error_of(""), "f.json: empty, not a thing");
  EXPECT_EQ(error_of(" \n\t"), "f.json: only white space, not a thing");
  EXPECT_EQ(error_of("{\"a\": [1, "), "f.json: cut short (its JSON ends at byte 9, inside a value), not a thing");
  EXPECT_EQ(error_of("{\"a\" 1}"), "f.json: not JSON (a syntax error at byte 6), not a thing");
  EXPECT_EQ(error_of("{\"a\": 1e999}"), "f.json: not JSON this reader takes (a number beyond any double), not a thing");
  EXPECT_EQ(error_of("[1]"), "f.json: an array at the top level, not a thing (a JSON object)");
  EXPECT_EQ(error_of("{}", false), "f.json: an object at the top level, not a thing (a JSON array)");
  EXPECT_EQ(error_of("{\"a\": 1}"), "");
  EXPECT_EQ(error_of("[]", false), "");
  // A whole number past 64 bits is a number JSON allows: read, as a double.
  EXPECT_EQ(error_of("{\"a\": 100000000000000000000000}"), "");
}

// No key twice in any object of a document, for every reader (reports,
// catalogues, calibrations, comparisons, the store's lines): refused naming
// the key by its path, whichever value would have been taken.
TEST(JsonDocument, AKeyTwiceInAnyObjectIsRefusedNamingIt) {
  EXPECT_EQ(error_of(R"({"a": 1, "a": 1})"), "f.json: field \"a\" appears twice, not a thing");
  EXPECT_EQ(error_of(R"({"a": {"b": 1, "c": {}, "b": 2}})"), "f.json: field \"a.b\" appears twice, not a thing");
  EXPECT_EQ(error_of(R"({"a": [1, [], {"x": 1}, {"y": [{"z": 0, "z": 0}]}]})"),
            "f.json: field \"a[3].y[0].z\" appears twice, not a thing");
  EXPECT_EQ(error_of(R"([{}, {"k": 1, "k": 2}])", false), "f.json: field \"[1].k\" appears twice, not a thing");
  EXPECT_EQ(read_json_document(R"({"a": 1, "a": 2})", "f.json", "a thing").problem, JsonProblem::kKeyTwice);
  // The same key in different objects, and keys that differ, are read.
  EXPECT_EQ(error_of(R"({"a": {"a": 1}, "b": [{"a": 1}, {"a": 2}], "A": 3})"), "");
}

template <typename T>
std::string field_error(const std::string& text) {
  const nlohmann::json object = nlohmann::json::parse(text);
  try {
    json_field<T>(object, "x");
    return "";
  } catch (const JsonFieldError& error) {
    return error.what();
  }
}

TEST(JsonDocument, AFieldIsWhatItsReaderTakesOrNamedWithWhatItIs) {
  using Words = std::vector<std::string>;
  EXPECT_EQ(field_error<std::string>("{}"), "field \"x\" is missing");
  EXPECT_EQ(field_error<Words>(R"({"x": "a b"})"), "field \"x\" must be an array of strings, got a string");
  EXPECT_EQ(field_error<Words>(R"({"x": ["a", 1]})"), "field \"x\" must be an array of strings, got an array holding a whole number");
  EXPECT_EQ(field_error<std::vector<int>>(R"({"x": [1.5]})"),
            "field \"x\" must be an array of whole numbers, got an array holding a number");
  EXPECT_EQ(field_error<std::vector<bool>>(R"({"x": [1]})"),
            "field \"x\" must be an array of values true or false, got an array holding a whole number");
  EXPECT_EQ((field_error<std::map<std::string, double>>(R"({"x": {"a": "3"}})")),
            "field \"x\" must be an object of numbers, got an object holding a string");
  EXPECT_EQ(field_error<double>(R"({"x": null})"), "field \"x\" must be a number, got null");
  EXPECT_EQ(field_error<bool>(R"({"x": 0})"), "field \"x\" must be true or false, got a whole number");
  EXPECT_EQ(field_error<int>(R"({"x": 2.0})"), "field \"x\" must be a whole number, got a number");
  std::string fallback = "none";
  EXPECT_EQ(json_field<std::string>(nlohmann::json::object(), "x", &fallback), "none");
}

// A whole number is read only into a type it fits: nlohmann's own get<int>()
// converts 10000000000 to 1410065408 and -1 to 4294967295 without a word.
TEST(JsonDocument, AWholeNumberIsReadOnlyIntoATypeItFits) {
  EXPECT_EQ(field_error<int>(R"({"x": 10000000000})"), "field \"x\" is out of range");
  EXPECT_EQ(field_error<int>(R"({"x": -10000000000})"), "field \"x\" is out of range");
  EXPECT_EQ(field_error<unsigned>(R"({"x": -1})"), "field \"x\" is out of range");
  EXPECT_EQ(field_error<std::int64_t>(R"({"x": 18446744073709551615})"), "field \"x\" is out of range");
  EXPECT_EQ(field_error<std::vector<int>>(R"({"x": [1, 4294967296]})"), "field \"x\" is out of range");
  const nlohmann::json object = nlohmann::json::parse(R"({"x": 2147483647, "y": -2147483648, "z": 18446744073709551615})");
  EXPECT_EQ(json_field<int>(object, "x"), 2147483647);
  EXPECT_EQ(json_field<int>(object, "y"), -2147483648);
  EXPECT_EQ(json_field<std::uint64_t>(object, "z"), UINT64_MAX);
}

}  // namespace
}  // namespace heapline
