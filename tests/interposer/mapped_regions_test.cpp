// RegionSet (interposer/src/base/mapped_regions.h): the counted address ranges
// behind munmap's and mremap's arithmetic.
#include "mapped_regions.h"

#include <gtest/gtest.h>

#include <random>
#include <set>
#include <vector>

namespace {

using heapline::AddressRange;
using heapline::RegionSet;

class Regions : public ::testing::Test {
 protected:
  std::vector<AddressRange> ranges() const {
    return std::vector<AddressRange>(set_.ranges(), set_.ranges() + set_.count());
  }
  AddressRange storage_[8] = {};
  RegionSet set_{storage_, 8};
};

TEST_F(Regions, AddsKeepAddressOrderAndMergeWhatTouches) {
  EXPECT_EQ(set_.add(300, 400), 100);
  EXPECT_EQ(set_.add(100, 200), 100);
  EXPECT_EQ(set_.add(200, 250), 50);  // touches the first: merged
  EXPECT_EQ(ranges(), (std::vector<AddressRange>{{100, 250}, {300, 400}}));
  EXPECT_EQ(set_.add(240, 310), 50);  // overlaps both: only the gap is new
  EXPECT_EQ(ranges(), (std::vector<AddressRange>{{100, 400}}));
  EXPECT_EQ(set_.add(150, 160), 0);  // already there: never counted twice
  EXPECT_EQ(set_.bytes(), 300u);
  EXPECT_EQ(set_.add(500, 500), 0);  // empty
}

TEST_F(Regions, RemovesOnlyWhatIsThereAcrossHolesAndPartsOfRanges) {
  set_.add(100, 200);
  set_.add(300, 400);
  set_.add(500, 600);
  EXPECT_EQ(set_.remove(0, 50), 0);
  EXPECT_EQ(set_.remove(200, 300), 0);  // the hole between two ranges
  EXPECT_EQ(set_.remove(150, 550), 50 + 100 + 50);
  EXPECT_EQ(ranges(), (std::vector<AddressRange>{{100, 150}, {550, 600}}));
  EXPECT_EQ(set_.bytes(), 100u);
}

TEST_F(Regions, AHoleInTheMiddleSplitsARange) {
  set_.add(100, 400);
  EXPECT_EQ(set_.remove(200, 300), 100);
  EXPECT_EQ(ranges(), (std::vector<AddressRange>{{100, 200}, {300, 400}}));
  EXPECT_EQ(set_.overlap(0, 1000), 200u);
  EXPECT_EQ(set_.overlap(150, 350), 100u);
  EXPECT_EQ(set_.overlap(200, 300), 0u);
}

TEST_F(Regions, AFullSetRefusesWithoutChangingAndTakesNewStorage) {
  for (std::uintptr_t i = 0; i < 8; ++i) ASSERT_EQ(set_.add(i * 100, i * 100 + 10), 10);
  EXPECT_FALSE(set_.room_for_one_more());
  EXPECT_EQ(set_.add(2000, 2010), -1);
  EXPECT_EQ(set_.remove(102, 104), -1);  // a split needs one more entry
  EXPECT_EQ(set_.bytes(), 80u);
  EXPECT_EQ(set_.remove(100, 110), 10);  // a whole range needs none
  EXPECT_EQ(set_.add(105, 115), 10);

  AddressRange larger[16];
  set_.move_to(larger, 16);
  EXPECT_EQ(set_.remove(107, 109), 2);
  EXPECT_EQ(set_.add(2000, 2010), 10);
  EXPECT_EQ(set_.count(), 10u);
  EXPECT_EQ(set_.bytes(), 88u);
}

TEST_F(Regions, WithoutRoomToSplitARangesTailGoesWithTheHole) {
  for (std::uintptr_t i = 0; i < 8; ++i) ASSERT_EQ(set_.add(i * 100, i * 100 + 10), 10);
  // [300, 310) loses its middle and its tail: only the head stays counted.
  EXPECT_EQ(set_.remove_through_range_end(302, 304), 8);
  EXPECT_EQ(set_.count(), 8u);
  EXPECT_EQ(ranges()[3], (AddressRange{300, 302}));
  EXPECT_EQ(set_.bytes(), 72u);
  // Whatever splits nothing is removed as remove would: across ranges and
  // holes, a whole range, a range's head or tail, nothing at all.
  EXPECT_EQ(set_.remove_through_range_end(405, 605), 5 + 10 + 5);
  EXPECT_EQ(set_.remove_through_range_end(0, 10), 10);
  EXPECT_EQ(set_.remove_through_range_end(700, 705), 5);
  EXPECT_EQ(set_.remove_through_range_end(900, 1000), 0);
  EXPECT_EQ(set_.remove_through_range_end(110, 100), 0);
  EXPECT_EQ(ranges(), (std::vector<AddressRange>{{100, 110}, {200, 210}, {300, 302}, {400, 405}, {605, 610}, {705, 710}}));
  EXPECT_EQ(set_.bytes(), 10u + 10 + 2 + 5 + 5 + 5);
}

// Against a page-by-page model: random adds and removes over a small space.
TEST(RegionsModel, AgreesWithAPageSetAfterRandomOperations) {
  std::vector<AddressRange> storage(512);
  RegionSet set(storage.data(), storage.size());
  std::set<std::uintptr_t> pages;
  std::mt19937 random(12345);
  for (int step = 0; step < 20000; ++step) {
    const std::uintptr_t begin = random() % 1000, length = 1 + random() % 40, end = begin + length;
    std::int64_t expected = 0;
    const bool adding = random() % 2 == 0;
    for (std::uintptr_t page = begin; page < end; ++page) {
      if (adding) expected += pages.insert(page).second ? 1 : 0;
      else expected += pages.erase(page);
    }
    ASSERT_EQ(adding ? set.add(begin, end) : set.remove(begin, end), expected) << "step " << step;
    ASSERT_EQ(set.bytes(), pages.size());
  }
  for (std::size_t i = 0; i + 1 < set.count(); ++i) {
    EXPECT_LT(set.ranges()[i].end, set.ranges()[i + 1].begin);  // disjoint, not touching
  }
}

// The same with room for four ranges only, as when the storage cannot grow:
// an add that has no room changes nothing, a remove that would split falls
// back to remove_through_range_end, which in the model takes the pages from
// `begin` to the end of their run.
TEST(RegionsModel, AFullSetLosesOnlyTheSplitRangesTail) {
  AddressRange storage[4];
  RegionSet set(storage, 4);
  std::set<std::uintptr_t> pages;
  std::mt19937 random(2024);
  int fallbacks = 0;
  for (int step = 0; step < 20000; ++step) {
    const std::uintptr_t begin = random() % 200, end = begin + 1 + random() % 20;
    if (random() % 2 == 0) {
      const std::int64_t added = set.add(begin, end);
      if (added < 0) continue;
      std::int64_t expected = 0;
      for (std::uintptr_t page = begin; page < end; ++page) expected += pages.insert(page).second ? 1 : 0;
      ASSERT_EQ(added, expected) << "step " << step;
    } else {
      std::int64_t removed = set.remove(begin, end);
      std::uintptr_t until = end;
      if (removed < 0) {
        ++fallbacks;
        removed = set.remove_through_range_end(begin, end);
        while (pages.count(until) != 0) ++until;
      }
      std::int64_t expected = 0;
      for (std::uintptr_t page = begin; page < until; ++page) expected += pages.erase(page);
      ASSERT_EQ(removed, expected) << "step " << step;
    }
    ASSERT_EQ(set.bytes(), pages.size()) << "step " << step;
    ASSERT_LE(set.count(), 4u);
  }
  EXPECT_GT(fallbacks, 100);  // the fallback was exercised, not just possible
}

}  // namespace
