// The figures' limits (figures.h): what a reader may hold and how figures
// are added, at and past the limits, where an int64 sum would overflow.
#include "heapline/figures.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

namespace heapline {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

TEST(Figures, BytesAreKeptWithinTheLimitOnBothSides) {
  EXPECT_EQ(bounded_bytes(0), 0);
  EXPECT_EQ(bounded_bytes(kBytesLimit), kBytesLimit);
  EXPECT_EQ(bounded_bytes(kBytesLimit + 1), kBytesLimit);
  EXPECT_EQ(bounded_bytes(-kBytesLimit), -kBytesLimit);
  EXPECT_EQ(bounded_bytes(-kBytesLimit - 1), -kBytesLimit);
  EXPECT_EQ(bounded_bytes(kMax), kBytesLimit);
  EXPECT_EQ(bounded_bytes(kMin), -kBytesLimit);
}

TEST(Figures, SizesAndTimesAreKeptWithinTheirLimits) {
  constexpr std::uint64_t kAll = std::numeric_limits<std::uint64_t>::max();
  EXPECT_EQ(bounded_byte_size(7), 7u);
  EXPECT_EQ(bounded_byte_size(kByteSizeLimit), kByteSizeLimit);
  EXPECT_EQ(bounded_byte_size(kByteSizeLimit + 1), kByteSizeLimit);
  EXPECT_EQ(bounded_byte_size(kAll), kByteSizeLimit);
  EXPECT_EQ(kByteSizeLimit, static_cast<std::uint64_t>(kBytesLimit));
  EXPECT_EQ(bounded_ns(kTimeLimitNs), kTimeLimitNs);
  EXPECT_EQ(bounded_ns(kTimeLimitNs + 1), kTimeLimitNs);
  EXPECT_EQ(bounded_ns(kAll), kTimeLimitNs);
  // A Unix time of today in ns plus a time since start stays in 64 bits.
  EXPECT_LT(kTimeLimitNs + kTimeLimitNs, kAll);
}

TEST(Figures, ASumIsExactWithinTheLimitAndTheLimitPastIt) {
  EXPECT_EQ(bounded_sum(3, 4), 7);
  EXPECT_EQ(bounded_sum(kBytesLimit - 1, 1), kBytesLimit);
  EXPECT_EQ(bounded_sum(kBytesLimit, 1), kBytesLimit);
  EXPECT_EQ(bounded_sum(kMax, kMax), kBytesLimit) << "int64 would overflow";
  EXPECT_EQ(bounded_sum(kMin, kMin), -kBytesLimit);
  EXPECT_EQ(bounded_sum(kMax, kMin), -1);
}

TEST(Figures, ABytesSumIsExactPast64BitsUntilItIsRead) {
  BytesSum sum;
  for (int i = 0; i < 16; ++i) sum += kMax;  // 2^67: far past int64
  EXPECT_EQ(sum.bytes(), kBytesLimit);
  for (int i = 0; i < 16; ++i) sum -= kMax;
  sum += 5;
  EXPECT_EQ(sum.bytes(), 5) << "taken back exactly, not from the limit";
  BytesSum negative(kMin);
  negative += kMin;
  EXPECT_EQ(negative.bytes(), -kBytesLimit);
}

}  // namespace
}  // namespace heapline
