#include "framework/vm/kernels/module_build.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

fs::path temp_dir() {
  std::string tmpl = (fs::temp_directory_path() / "tracebed-modbuild-XXXXXX").string();
  EXPECT_NE(::mkdtemp(tmpl.data()), nullptr);
  return tmpl;
}

// A Debian kernel of the catalogue: no modules directory of its own to build in.
TEST(ModuleBuild, KernelWithoutModulesDirectoryIsRefused) {
  KernelFiles k;
  k.name = "debian-6.12";
  auto r = module_build_tree(k);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("debian-6.12 has no modules directory"));
}

// Modules but no build/ tree (what a kernel built before modules had).
TEST(ModuleBuild, KernelWithoutBuildTreeNamesWhatIsMissing) {
  fs::path dir = temp_dir();
  KernelFiles k;
  k.name = "k";
  k.modules_dir = dir / "lib" / "modules" / "7.2.13";
  fs::create_directories(k.modules_dir);
  auto r = build_module(k, dir, 1);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("Makefile and Module.symvers"));
  fs::remove_all(dir);
}

// A directory that is no kbuild module is refused before make runs.
TEST(ModuleBuild, SourceWithoutMakefileIsRefused) {
  fs::path dir = temp_dir();
  KernelFiles k;
  k.name = "k";
  k.modules_dir = dir / "lib" / "modules" / "7.2.13";
  fs::create_directories(k.modules_dir / "build");
  std::ofstream(k.modules_dir / "build" / "Makefile") << "\n";
  std::ofstream(k.modules_dir / "build" / "Module.symvers") << "\n";
  fs::create_directories(dir / "src");
  auto r = build_module(k, dir / "src", 1);
  ASSERT_FALSE(r);
  EXPECT_THAT(r.error().message, HasSubstr("no Makefile or Kbuild"));
  fs::remove_all(dir);
}

TEST(ModuleBuild, OwnModulesAreTracebedEvents) {
  EXPECT_TRUE(fs::exists(own_modules_dir() / "tracebed_events" / "Makefile")) << own_modules_dir();
}

}  // namespace
}  // namespace tracebed::vm
