// Early blocks (next_allocator.h): the glibc blocks handed out while the
// allocator is being resolved (dlsym's own allocations) are remembered, so
// that neither their free nor their realloc is counted as the program's.
// The table must follow each block exactly: an address left in it after
// its block moved would make glibc's next block at that address, the
// program's, uncounted when freed. The blocks are glibc's own
// (__libc_malloc), as the early blocks are, whatever allocator the test
// program has (the sanitizers').
#include <gtest/gtest.h>

#include <cstdint>

#include "next_allocator.h"

namespace heapline {
namespace {

std::size_t remembered() { return g_early_count.load(); }

TEST(EarlyBlocks, AReallocForgetsTheOldAddressAndRemembersTheNew) {
  const std::size_t before = remembered();
  void* p = remember_early_block(__libc_malloc(24), 24);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(remembered(), before + 1);
  void* blocker = __libc_malloc(24);  // so that the block cannot grow in place
  void* q = early_realloc(p, 1 << 20);
  ASSERT_NE(q, nullptr);
  ASSERT_NE(q, p);
  EXPECT_EQ(remembered(), before + 1) << "one block, the moved one";
  std::size_t size = 0;
  EXPECT_FALSE(take_early_block(p, &size)) << "the old address is glibc's again";
  EXPECT_TRUE(take_early_block(q, &size));
  EXPECT_EQ(size, std::size_t{1} << 20);
  EXPECT_EQ(remembered(), before);
  __libc_free(q);
  __libc_free(blocker);
}

TEST(EarlyBlocks, AFailedReallocKeepsTheBlockAndAReallocToZeroForgetsIt) {
  const std::size_t before = remembered();
  void* p = remember_early_block(__libc_malloc(8), 8);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(early_realloc(p, SIZE_MAX / 2), nullptr);  // glibc refuses: p is untouched
  EXPECT_EQ(remembered(), before + 1);
  std::size_t size = 0;
  EXPECT_TRUE(take_early_block(p, &size));
  EXPECT_EQ(size, 8u);
  p = remember_early_block(p, 8);
  EXPECT_EQ(early_realloc(p, 0), nullptr);  // glibc: realloc(p, 0) frees p
  EXPECT_EQ(remembered(), before);
}

}  // namespace
}  // namespace heapline
