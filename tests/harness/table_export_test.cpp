// The suite's table on the terminal: one row per scenario, measured or
// failed, in the order the suite ran them.
#include "heapline_bench/reports/table_export.h"

#include <gtest/gtest.h>

#include <string>

namespace heapline::bench {
namespace {

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

TEST(SuiteTable, AFailedScenarioHasOneRowThatSaysSo) {
  SuiteRow measured{"churn-1t", "malloc_churn 1 100", true, "", {}};
  measured.point.overhead = 0.05;
  SuiteRow failed{"python", "python3 churn.py 5", false, "the command exited 1", {}};
  const std::string table = format_suite_table({measured, failed}, "libheapline.so", Machine{});
  EXPECT_EQ(count_of(table, "`churn-1t`"), 1u) << table;
  EXPECT_EQ(count_of(table, "`python`"), 1u) << table;
  const auto row = table.find("| `python`");
  ASSERT_NE(row, std::string::npos) << table;
  const std::string python_row = table.substr(row, table.find('\n', row) - row);
  EXPECT_NE(python_row.find("failed"), std::string::npos) << table;
  EXPECT_NE(table.find("python failed: the command exited 1"), std::string::npos) << table;
  EXPECT_LT(table.find("`churn-1t`"), table.find("`python`")) << "in the order the suite ran them";
}

}  // namespace
}  // namespace heapline::bench
