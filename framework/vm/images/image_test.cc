#include "framework/vm/images/image.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/base/own_mount_for_tests.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// An image in a cache of the test's own, from stand-in files (the writer
// copies bytes; only busybox's ELF interpreter is looked at).
class CachedImage : public base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    for (const char* f : {"agent", "probe-target", "busybox"}) std::ofstream(dir_ / f) << "stand-in " << f << "\n";
    options_.agent = dir_ / "agent";
    options_.probe_target = dir_ / "probe-target";
    options_.busybox = dir_ / "busybox";
    kernel_.name = "stand-in";
    kernel_.release = "6.0.0-stand-in";
    ::setenv("TRACEBED_CACHE", (dir_ / "cache").c_str(), 1);
  }
  void TearDown() override {
    ::unsetenv("TRACEBED_CACHE");
    ScratchDirTest::TearDown();
  }
  ImageOptions options_;
  KernelFiles kernel_;
};

TEST_F(CachedImage, CorruptOrCutShortImageIsWrittenAgain) {
  auto first = build_initramfs(kernel_, options_);
  ASSERT_TRUE(first.ok()) << first.error().message;
  auto written = base::read_file(*first);
  ASSERT_TRUE(written.ok()) << written.error().message;
  const std::string good = *written;
  ASSERT_GT(good.size(), 100u);
  for (std::string bad : {good.substr(0, good.size() / 2), std::string(good).replace(good.size() / 2, 4, "XXXX")}) {
    std::ofstream(*first, std::ios::binary | std::ios::trunc) << bad;
    auto again = build_initramfs(kernel_, options_);
    ASSERT_TRUE(again.ok()) << again.error().message;
    EXPECT_EQ(*again, *first);
    auto rewritten = base::read_file(*again);
    ASSERT_TRUE(rewritten.ok()) << rewritten.error().message;
    EXPECT_TRUE(*rewritten == good) << "the damaged image was kept (" << bad.size() << " bytes)";
  }
}

// The image cache's disk full, or read-only, while an image is written
// (images/ on a tmpfs in a mount namespace of the child's own): a clear
// error naming the file and the disk's words, no partial file left for a
// later run to take as the image, and with room the image is written.
TEST_F(CachedImage, FullOrReadOnlyDiskIsAClearErrorAndLeavesNothing) {
  std::string big(300000, '\0');
  std::mt19937 random(7);  // bytes gzip cannot shrink
  for (char& c : big) c = static_cast<char>(random());
  std::ofstream(dir_ / "agent", std::ios::binary | std::ios::trunc) << big;
  const fs::path images = dir_ / "cache" / "images";
  auto run = base::run_on_own_mount(images, "size=16k", false, [&] {
    auto built = build_initramfs(kernel_, options_);
    std::string left;
    for (const auto& e : fs::directory_iterator(images)) left += " " + e.path().filename().string();
    return (built ? "built " + built->string() : "error " + built.error().message) + "\nleft:" + left;
  });
  if (!run.setup_error.empty()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << run.setup_error;
  EXPECT_THAT(run.result, ::testing::StartsWith("error " + images.string() + "/stand-in-"));
  EXPECT_THAT(run.result, HasSubstr("No space left on device"));
  EXPECT_THAT(run.result, ::testing::EndsWith("\nleft:")) << "a partial image was left";
  // Read-only: the same, in the file system's words.
  auto read_only = base::run_on_own_mount(images, "size=16m", true, [&] {
    auto built = build_initramfs(kernel_, options_);
    return built ? "built " + built->string() : "error " + built.error().message;
  });
  ASSERT_EQ(read_only.setup_error, "");
  EXPECT_THAT(read_only.result, ::testing::StartsWith("error " + images.string() + "/stand-in-"));
  EXPECT_THAT(read_only.result, HasSubstr("Read-only file system"));
  auto built = build_initramfs(kernel_, options_);
  ASSERT_TRUE(built.ok()) << built.error().message;
  EXPECT_GT(fs::file_size(*built), big.size());
}

TEST(Cpio, NewcEntriesAreAlignedAndTerminated) {
  CpioWriter w;
  w.file("/init", "#!/bin/sh\n", 0755);
  std::string a = w.finish();
  // 110-byte header, "init\0" padded to 4, 10 data bytes padded to 4.
  ASSERT_GE(a.size(), 110u);
  EXPECT_EQ(a.substr(0, 6), "070701");
  EXPECT_EQ(a.substr(14, 8), "000081ed");  // S_IFREG | 0755
  EXPECT_EQ(a.substr(54, 8), "0000000a");  // file size
  EXPECT_EQ(a.substr(94, 8), "00000005");  // name size incl. NUL
  EXPECT_EQ(a.substr(110, 5), std::string("init\0", 5));
  EXPECT_EQ(a.size() % 4, 0u);
  EXPECT_THAT(a, HasSubstr("TRAILER!!!"));
}

class ModuleOrder : public base::ScratchDirTest {
 protected:
  void write(const std::string& rel, std::string_view text) {
    fs::create_directories((dir_ / rel).parent_path());
    std::ofstream(dir_ / rel) << text;
  }
};

// modules.dep lines as depmod writes them for Debian's 6.1 cloud kernel.
TEST_F(ModuleOrder, FromModulesDep) {
  write("modules.dep",
        "kernel/drivers/virtio/virtio.ko:\n"
        "kernel/drivers/virtio/virtio_ring.ko:\n"
        "kernel/drivers/virtio/virtio_pci_modern_dev.ko:\n"
        "kernel/drivers/virtio/virtio_pci_legacy_dev.ko:\n"
        "kernel/drivers/virtio/virtio_pci.ko: kernel/drivers/virtio/virtio_pci_legacy_dev.ko "
        "kernel/drivers/virtio/virtio_pci_modern_dev.ko kernel/drivers/virtio/virtio_ring.ko "
        "kernel/drivers/virtio/virtio.ko\n"
        "kernel/drivers/char/virtio_console.ko: kernel/drivers/virtio/virtio_ring.ko kernel/drivers/virtio/virtio.ko\n");
  auto order = module_load_order(dir_, {"virtio_pci", "virtio-console"});
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_THAT(*order, ElementsAre("kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko",
                                  "kernel/drivers/virtio/virtio_pci_modern_dev.ko",
                                  "kernel/drivers/virtio/virtio_pci_legacy_dev.ko",
                                  "kernel/drivers/virtio/virtio_pci.ko", "kernel/drivers/char/virtio_console.ko"));
}

TEST_F(ModuleOrder, BuiltinModulesAreSkipped) {
  write("modules.builtin", "kernel/drivers/virtio/virtio.ko\nkernel/drivers/virtio/virtio_pci.ko\n"
                           "kernel/drivers/char/virtio_console.ko\n");
  auto order = module_load_order(dir_, {"virtio_pci", "virtio_console"});
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_TRUE(order->empty());
}

TEST_F(ModuleOrder, FromModinfoDependsWithoutModulesDep) {
  // Only the .modinfo strings matter to the resolver.
  write("kernel/drivers/virtio/virtio.ko", std::string("\0license=GPL\0depends=\0", 22));
  write("kernel/drivers/virtio/virtio_ring.ko", std::string("\0depends=virtio\0", 16));
  write("kernel/drivers/char/virtio_console.ko", std::string("\0depends=virtio_ring,virtio\0", 28));
  auto order = module_load_order(dir_, {"virtio_console"});
  ASSERT_TRUE(order.ok()) << order.error().message;
  EXPECT_THAT(*order, ElementsAre("kernel/drivers/virtio/virtio.ko", "kernel/drivers/virtio/virtio_ring.ko",
                                  "kernel/drivers/char/virtio_console.ko"));
}

TEST_F(ModuleOrder, MissingModuleIsNamed) {
  auto order = module_load_order(dir_, {"virtio_console"});
  ASSERT_FALSE(order.ok());
  EXPECT_THAT(order.error().message, HasSubstr("module virtio_console: neither built in nor under"));
}

}  // namespace
}  // namespace tracebed::vm
