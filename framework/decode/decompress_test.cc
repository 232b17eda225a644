// Sizes a file states for its compressed blocks are checked before anything
// of that size is allocated.
#include "framework/decode/decompress.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
namespace {

using ::testing::HasSubstr;

std::vector<uint8_t> zlib_of(const std::vector<uint8_t>& in) {
  uLongf n = compressBound(in.size());
  std::vector<uint8_t> out(n);
  EXPECT_EQ(compress2(out.data(), &n, in.data(), in.size(), 9), Z_OK);
  out.resize(n);
  return out;
}

std::vector<uint8_t> zstd_of(const std::vector<uint8_t>& in, bool with_size) {
  ZSTD_CCtx* ctx = ZSTD_createCCtx();
  ZSTD_CCtx_setParameter(ctx, ZSTD_c_contentSizeFlag, with_size ? 1 : 0);
  std::vector<uint8_t> out(ZSTD_compressBound(in.size()));
  size_t n = ZSTD_compress2(ctx, out.data(), out.size(), in.data(), in.size());
  ZSTD_freeCCtx(ctx);
  EXPECT_FALSE(ZSTD_isError(n));
  out.resize(n);
  return out;
}

TEST(DecompressedSize, TruthfulSizesPass) {
  std::vector<uint8_t> page(4096 * 10, 0);
  page[7] = 42;
  EXPECT_TRUE(check_decompressed_size(Codec::zlib, zlib_of(page), page.size(), "chunk").ok());
  EXPECT_TRUE(check_decompressed_size(Codec::zstd, zstd_of(page, true), page.size(), "chunk").ok());
  EXPECT_TRUE(check_decompressed_size(Codec::zstd, zstd_of(page, false), page.size(), "chunk").ok());
  EXPECT_TRUE(check_decompressed_size(Codec::none, page, page.size(), "chunk").ok());
}

TEST(DecompressedSize, ZlibCannotExpandBeyondDeflatesLimit) {
  std::vector<uint8_t> page(4096, 0);
  auto z = zlib_of(page);
  Status st = check_decompressed_size(Codec::zlib, z, uint64_t{256} << 20, "offset 0x40: chunk 3");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("offset 0x40: chunk 3"));
  EXPECT_THAT(st.error().message, HasSubstr("cannot hold"));
}

TEST(DecompressedSize, ZstdFrameAndHeaderMustAgree) {
  std::vector<uint8_t> page(4096, 1);
  Status st = check_decompressed_size(Codec::zstd, zstd_of(page, true), 8192, "chunk");
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("the frame holds 4096 bytes, the header states 8192"));
  std::vector<uint8_t> garbage(16, 0xab);
  EXPECT_FALSE(check_decompressed_size(Codec::zstd, garbage, 4096, "chunk").ok());
}

TEST(DecompressedSize, ContentsReaderStopsAtItsMemoryLimit) {
  const std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat";
  auto text = base::read_file(path);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::vector<uint8_t> file(text->begin(), text->end());
  ASSERT_TRUE(read_trace_dat_contents(file).ok());
  auto limited = read_trace_dat_contents(file, nullptr, 64 << 10);
  ASSERT_FALSE(limited.ok());
  EXPECT_THAT(limited.error().message, HasSubstr("allowed in memory"));
}

// Text in steps: every prefix `ready` reports is already final, the
// reports climb to the whole size, and the bytes are the one-shot ones.
std::vector<uint8_t> kallsyms_like(size_t lines) {
  std::string text;
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (size_t i = 0; i < lines; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    text += fmt::format("ffffffff{:08x} t sym_{}_{}\n", static_cast<uint32_t>(state >> 32), i, state % 997);
  }
  return std::vector<uint8_t>(text.begin(), text.end());
}

TEST(DecompressInSteps, EveryReportedPrefixIsFinal) {
  const std::vector<uint8_t> plain = kallsyms_like(60000);  // ~2 MB: many steps
  for (Codec codec : {Codec::zstd, Codec::zlib, Codec::none}) {
    SCOPED_TRACE(codec_name(codec));
    const std::vector<uint8_t> packed =
        codec == Codec::zstd ? zstd_of(plain, true) : codec == Codec::zlib ? zlib_of(plain) : plain;
    std::vector<uint8_t> out(plain.size());
    std::vector<size_t> reports;
    bool prefixes_final = true;
    Status st = decompress_in_steps(codec, packed, out, "test", [&](size_t n) {
      reports.push_back(n);
      prefixes_final = prefixes_final && n <= out.size() && std::equal(out.begin(), out.begin() + n, plain.begin());
    });
    ASSERT_TRUE(st.ok()) << st.error().message;
    EXPECT_EQ(out, plain);
    EXPECT_TRUE(prefixes_final);
    ASSERT_FALSE(reports.empty());
    EXPECT_EQ(reports.back(), plain.size());
    EXPECT_TRUE(std::is_sorted(reports.begin(), reports.end()));
    if (codec != Codec::none) {
      EXPECT_GT(reports.size(), 3u) << "not in steps";
    }
  }
}

TEST(DecompressInSteps, BadInputFailsAsInOneShot) {
  const std::vector<uint8_t> plain = kallsyms_like(20000);
  for (Codec codec : {Codec::zstd, Codec::zlib}) {
    SCOPED_TRACE(codec_name(codec));
    const std::vector<uint8_t> packed = codec == Codec::zstd ? zstd_of(plain, true) : zlib_of(plain);
    std::vector<uint8_t> cut(packed.begin(), packed.begin() + static_cast<ptrdiff_t>(packed.size() / 2));
    std::vector<uint8_t> bent = packed;
    bent[bent.size() / 2] ^= 0x55;
    std::vector<uint8_t> small(plain.size() - 1);
    for (const auto& [in, size] : {std::pair{cut, plain.size()}, std::pair{bent, plain.size()},
                                   std::pair{packed, plain.size() - 1}, std::pair{packed, plain.size() + 1}}) {
      std::vector<uint8_t> a(size), b(size);
      Status one = decompress(codec, in, a, "offset 0x40: section 15");
      Status steps = decompress_in_steps(codec, in, b, "offset 0x40: section 15", [](size_t) {});
      ASSERT_FALSE(one.ok());
      ASSERT_FALSE(steps.ok());
      EXPECT_EQ(steps.error().message, one.error().message);
    }
  }
}

}  // namespace
}  // namespace tracebed::decode
