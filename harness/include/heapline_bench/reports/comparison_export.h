// The release comparison as the docs show it (Markdown) and as it is kept
// (JSON with every round's raw times). The docs' section is always made from
// the JSON, never typed.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "heapline_bench/measurement/compare.h"

namespace heapline::bench {

// The Markdown table of the docs (scenario rows, one column per build) and
// the line that names the machine.
std::string comparison_markdown(const Comparison& comparison);
// Every round's raw data.
nlohmann::ordered_json comparison_json(const Comparison& comparison);
// The table back from the JSON: the docs' section is generated from it.
std::string comparison_markdown_from_json(const nlohmann::json& json);

}  // namespace heapline::bench
