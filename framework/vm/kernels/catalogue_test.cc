#include "framework/vm/kernels/catalogue.h"

#include <unistd.h>

#include <fstream>
#include <regex>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/vm/kernels/bzimage_for_tests.h"

namespace tracebed::vm {
namespace {

using ::testing::HasSubstr;

Catalogue load_tree_catalogue() {
  auto c = Catalogue::load(std::filesystem::path(TRACEBED_SOURCE_DIR) / "vmimages" / "kernels.json");
  EXPECT_TRUE(c.ok()) << c.error().message;
  return std::move(c).value();
}

TEST(Catalogue, HasEveryPinnedKernel) {
  auto c = load_tree_catalogue();
  for (const char* name : {"debian-5.10", "debian-6.1", "debian-6.12", "debian-7.2", "debian-7.2-rt", "debian-7.3-rc"})
    EXPECT_TRUE(c.kernels().count(name)) << name;
  EXPECT_EQ(c.default_kernel(), "debian-6.12");
}

TEST(Catalogue, EveryEntryIsPinnedAndConsistent) {
  static const std::regex sha256("[0-9a-f]{64}");
  auto catalogue = load_tree_catalogue();
  for (const auto& [name, k] : catalogue.kernels()) {
    SCOPED_TRACE(name);
    EXPECT_FALSE(k.release.empty());
    if (k.build) continue;  // Catalogue.BuildKernelHasAPinnedRecipe
    ASSERT_FALSE(k.packages.empty());
    for (const auto& p : k.packages) {
      EXPECT_FALSE(p.version.empty()) << p.name;
      EXPECT_TRUE(std::regex_match(p.sha256, sha256)) << p.name << " " << p.sha256;
    }
    EXPECT_THAT(k.vmlinuz, HasSubstr(k.release));
    EXPECT_THAT(k.modules_dir, HasSubstr(k.release));
  }
}

TEST(Catalogue, BuildKernelHasAPinnedRecipe) {
  static const std::regex sha256("[0-9a-f]{64}");
  auto catalogue = load_tree_catalogue();
  ASSERT_TRUE(catalogue.kernels().count("tracebed-7.2"));
  const KernelSpec& k = catalogue.kernels().at("tracebed-7.2");
  ASSERT_TRUE(k.build.has_value());
  EXPECT_EQ(k.build->source.name, "linux-source-7.2");
  EXPECT_EQ(k.build->source.arch, "all");
  EXPECT_TRUE(std::regex_match(k.build->source.sha256, sha256)) << k.build->source.sha256;
  EXPECT_EQ(k.build->base_config, "tinyconfig");
  EXPECT_TRUE(k.build->fragment.is_absolute());
  EXPECT_THAT(k.build->fragment_text, HasSubstr("CONFIG_USER_EVENTS=y"));
  EXPECT_EQ(k.suite, "sid");
  EXPECT_TRUE(k.packages.empty());
}

TEST(Catalogue, BuildKernelWithAMissingRecipeSaysWhich) {
  auto dir = std::filesystem::path(::testing::TempDir()) / fmt::format("catalogue-{}", getpid());
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "kernels.json") << R"({"apt_sources": [], "kernels": {"mine": {"kind": "build", "recipe": "none/recipe.json"}}})";
  auto c = Catalogue::load(dir / "kernels.json");
  std::filesystem::remove_all(dir);
  ASSERT_FALSE(c.ok());
  EXPECT_THAT(c.error().message, HasSubstr("none/recipe.json: cannot open"));
}

TEST(Catalogue, UnknownNameListsTheKnownOnes) {
  auto spec = load_tree_catalogue().resolve("debian-9.9");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("unknown kernel 'debian-9.9'"));
  EXPECT_THAT(spec.error().message, HasSubstr("debian-6.12"));
}

TEST(Catalogue, MissingImagePathIsNamed) {
  auto spec = load_tree_catalogue().resolve("/nonexistent/bzImage");
  ASSERT_FALSE(spec.ok());
  EXPECT_THAT(spec.error().message, HasSubstr("kernel image /nonexistent/bzImage: no such file"));
}

// IMAGE:MODULES_DIR names both (the comma form too); each missing part is named.
TEST(Catalogue, ImageAndModulesDirectoryWithAColon) {
  auto bad_modules = load_tree_catalogue().resolve("/proc/self/exe:/nonexistent/modules");
  ASSERT_FALSE(bad_modules.ok());
  EXPECT_THAT(bad_modules.error().message, HasSubstr("modules directory /nonexistent/modules: no such directory"));
  auto comma = load_tree_catalogue().resolve("/nonexistent/bzImage,/tmp");
  ASSERT_FALSE(comma.ok());
  EXPECT_THAT(comma.error().message, HasSubstr("kernel image /nonexistent/bzImage: no such file"));
}

// The release is the first word of the setup header's kernel_version.
TEST(BzImage, ReleaseComesFromTheSetupHeader) {
  std::string image = stand_in_bzimage("7.2.0-tracebed (builder@host) #1 SMP PREEMPT_DYNAMIC");
  auto path = std::filesystem::path(::testing::TempDir()) / fmt::format("bzImage-{}", getpid());
  std::ofstream(path, std::ios::binary).write(image.data(), static_cast<std::streamsize>(image.size()));
  auto release = bzimage_release(path);
  std::filesystem::remove(path);
  ASSERT_TRUE(release.ok()) << release.error().message;
  EXPECT_EQ(*release, "7.2.0-tracebed");
}

TEST(BzImage, NotAKernelSaysSo) {
  auto path = std::filesystem::path(::testing::TempDir()) / fmt::format("not-a-kernel-{}", getpid());
  std::ofstream(path) << std::string(0x300, 'x');
  auto release = bzimage_release(path);
  std::filesystem::remove(path);
  ASSERT_FALSE(release.ok());
  EXPECT_THAT(release.error().message, HasSubstr("not a bzImage (no HdrS setup header at 0x202)"));
}

}  // namespace
}  // namespace tracebed::vm
