// The docs' scenario table (docs/_generated/scenarios.md), from the catalogue.
#pragma once

#include <string>

#include "heapline_bench/measurement/catalogue.h"

namespace heapline::bench {

std::string scenarios_markdown(const Catalogue& catalogue);

}  // namespace heapline::bench
