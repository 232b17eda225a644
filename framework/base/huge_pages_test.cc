#include "framework/base/huge_pages.h"

#include "framework/base/bytes.h"

#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

namespace tracebed::base {
namespace {

struct Entry {
  uint64_t address;
  const char* name;
  const char* end;
};

TEST(HugePageAllocator, BigArraysStartOnABlockBoundary) {
  std::vector<Entry, HugePageAllocator<Entry>> v;
  v.reserve(3'000'000 / sizeof(Entry));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % huge_pages::kBlock, 0u);
}

TEST(HugePageAllocator, KeepsWhatIsWrittenAcrossGrowth) {
  // Grows from malloc'd to block-backed storage and on through several
  // reallocations; every element survives each move.
  std::vector<uint64_t, HugePageAllocator<uint64_t>> v;
  for (uint64_t i = 0; i < 1'500'000; ++i) v.push_back(i * 2654435761u);
  ASSERT_EQ(v.size(), 1'500'000u);
  for (uint64_t i = 0; i < v.size(); ++i) ASSERT_EQ(v[i], i * 2654435761u) << "at " << i;
  v.shrink_to_fit();
  EXPECT_EQ(v[1'499'999], uint64_t{1'499'999} * 2654435761u);
}

TEST(HugePageAllocator, SmallArraysComeFromMalloc) {
  // A 4 KB array is not worth a 2 MiB block: it comes from malloc, which
  // never hands out block-aligned addresses for small sizes.
  std::vector<int, HugePageAllocator<int>> v(1000, 7);
  EXPECT_EQ(v.back(), 7);
  EXPECT_NE(reinterpret_cast<uintptr_t>(v.data()) % huge_pages::kBlock, 0u);
}

TEST(HugePageAllocator, BigByteBuffersUseBlocksToo) {
  // A decompressed kallsyms section is a ByteBuffer of megabytes.
  ByteBuffer big(8'000'000);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % huge_pages::kBlock, 0u);
  big.back() = 0x5a;
  big.resize(12'000'000);  // moved to a larger block, the bytes with it
  EXPECT_EQ(big[7'999'999], 0x5a);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(big.data()) % huge_pages::kBlock, 0u);
}

TEST(HugePageAllocator, BlocksAreWholeMultiplesOfTwoMiB) {
  EXPECT_EQ(huge_pages::rounded(1), huge_pages::kBlock);
  EXPECT_EQ(huge_pages::rounded(huge_pages::kBlock), huge_pages::kBlock);
  EXPECT_EQ(huge_pages::rounded(huge_pages::kBlock + 1), 2 * huge_pages::kBlock);
}

}  // namespace
}  // namespace tracebed::base
