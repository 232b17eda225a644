#include "framework/vm/images/bootconfig.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {
namespace {

using ::testing::HasSubstr;

const std::filesystem::path kFixtures = std::filesystem::path(TRACEBED_SOURCE_DIR) / "fixtures" / "bootconfig";

uint32_t le32_at(const std::string& s, size_t at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | static_cast<unsigned char>(s[at + i]);
  return v;
}

// The layout of Documentation/admin-guide/bootconfig.rst, field by field.
TEST(Bootconfig, TrailerIsTextNulPaddingSizeChecksumMagic) {
  std::string text = "a = b\n";  // 6 bytes, + NUL = 7; 'a'+' '+'='+' '+'b'+'\n' = 97+32+61+32+98+10
  auto t = bootconfig_trailer(text, 0);
  ASSERT_TRUE(t.ok()) << t.error().message;
  // 7 data bytes + 20 footer bytes = 27; one NUL pads the file to 28.
  ASSERT_EQ(t->size(), 28u);
  EXPECT_EQ(t->substr(0, 6), text);
  EXPECT_EQ(t->substr(6, 2), std::string(2, '\0'));
  EXPECT_EQ(le32_at(*t, 8), 8u);  // size counts the NUL and the padding
  EXPECT_EQ(le32_at(*t, 12), 97u + 32 + 61 + 32 + 98 + 10);
  EXPECT_EQ(t->substr(16), "#BOOTCONFIG\n");
}

TEST(Bootconfig, WholeFileIsAlignedToFourBytesForEveryInitrdSize) {
  for (uint64_t initrd = 0; initrd < 8; ++initrd) {
    for (size_t len = 0; len < 8; ++len) {
      SCOPED_TRACE(fmt::format("initrd {} text {}", initrd, len));
      auto t = bootconfig_trailer(std::string(len, 'x'), initrd);
      ASSERT_TRUE(t.ok());
      EXPECT_EQ((initrd + t->size()) % 4, 0u);
      uint32_t size = le32_at(*t, t->size() - 20);
      EXPECT_EQ(size + 20, t->size());
      EXPECT_GE(size, len + 1);      // the text and its NUL
      EXPECT_LE(size, len + 1 + 3);  // at most 3 padding bytes
    }
  }
}

// Independent: the kernel's tools/bootconfig wrote these (fixtures/bootconfig/README.md).
TEST(Bootconfig, SameBytesAsTheKernelsTool) {
  auto text = base::read_file(kFixtures / "boottime.bconf");
  ASSERT_TRUE(text.ok()) << text.error().message;
  for (int n = 0; n < 4; ++n) {
    SCOPED_TRACE(n);
    auto want = base::read_file(kFixtures / fmt::format("with-bootconfig-{}.img", n));
    ASSERT_TRUE(want.ok()) << want.error().message;
    auto got = append_bootconfig(std::string(1000 + n, 'i'), *text);
    ASSERT_TRUE(got.ok()) << got.error().message;
    EXPECT_EQ(*got, *want);
  }
}

TEST(Bootconfig, FindsWhatTheKernelsToolWrote) {
  auto text = base::read_file(kFixtures / "boottime.bconf");
  auto image = base::read_file(kFixtures / "with-bootconfig-3.img");
  ASSERT_TRUE(text.ok() && image.ok());
  auto found = find_bootconfig(*image);
  ASSERT_TRUE(found.ok()) << found.error().message;
  EXPECT_EQ(found->text, *text);
  EXPECT_EQ(found->initrd_size, 1003u);
}

TEST(Bootconfig, FoundEvenWhenALoaderPaddedTheImage) {
  auto image = append_bootconfig("initrd", "k = v\n");
  ASSERT_TRUE(image.ok());
  for (int pad = 0; pad < 4; ++pad) {
    auto found = find_bootconfig(*image + std::string(pad, '\0'));
    ASSERT_TRUE(found.ok()) << pad << ": " << found.error().message;
    EXPECT_EQ(found->text, "k = v\n");
  }
  EXPECT_FALSE(find_bootconfig(*image + std::string(4, '\0')).ok());
}

TEST(Bootconfig, BadInputSaysWhat) {
  auto nul = bootconfig_trailer(std::string("a = b\0c", 7), 0);
  ASSERT_FALSE(nul.ok());
  EXPECT_THAT(nul.error().message, HasSubstr("a NUL byte at offset 5"));

  // XBC_DATA_MAX is 32767: 32766 characters and the NUL fit, one more does not.
  EXPECT_TRUE(bootconfig_trailer(std::string(32766, 'x'), 1).ok());
  auto big = bootconfig_trailer(std::string(32767, 'x'), 0);
  ASSERT_FALSE(big.ok());
  EXPECT_THAT(big.error().message, HasSubstr("the kernel takes at most 32767"));

  EXPECT_THAT(find_bootconfig("just an initrd, long enough").error().message, HasSubstr("no #BOOTCONFIG magic"));
  auto image = append_bootconfig("initrd", "k = v\n").value();
  std::string corrupt = image;
  corrupt[0 + 6] = 'K';  // first byte of the text
  EXPECT_THAT(find_bootconfig(corrupt).error().message, HasSubstr("checksum"));
  std::string too_long = image;
  too_long[image.size() - 20] = 100;  // size field beyond the image
  EXPECT_THAT(find_bootconfig(too_long).error().message, HasSubstr("exceeds the"));
}

TEST(Bootconfig, KernelTakesItOnlyWithBootConfigInItsConfig) {
  auto dir = std::filesystem::path(::testing::TempDir());
  auto with = dir / fmt::format("config-with-{}", getpid());
  auto without = dir / fmt::format("config-without-{}", getpid());
  ASSERT_TRUE(write_file_atomic(with, "CONFIG_BLK_DEV_INITRD=y\nCONFIG_BOOT_CONFIG=y\n").ok());
  // Debian's kernels say "is not set"; a longer name must not count.
  ASSERT_TRUE(write_file_atomic(without, "CONFIG_BLK_DEV_INITRD=y\n# CONFIG_BOOT_CONFIG is not set\n"
                                         "CONFIG_BOOT_CONFIG_EMBED=y\n").ok());
  EXPECT_TRUE(kernel_takes_bootconfig(with));
  EXPECT_FALSE(kernel_takes_bootconfig(without));
  EXPECT_TRUE(kernel_takes_bootconfig(dir / "no-such-config"));  // unknown: try
  std::filesystem::remove(with);
  std::filesystem::remove(without);
}

}  // namespace
}  // namespace tracebed::vm
