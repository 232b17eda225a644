#include "framework/vm/kernels/kernel_check.h"

#include <algorithm>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

// Our own kernel's fragment, what `kernels build` makes sure of, as its
// .config has it: TRACING and EVENT_TRACING are selected by the tracers.
KconfigValues fragment() {
  auto v = parse_kconfig_values(base::source_file("vmimages/kernels/tracebed-7.2/config.fragment"), "fragment");
  EXPECT_TRUE(v.ok()) << v.error().message;
  if (!v.ok()) return {};
  v->emplace("CONFIG_TRACING", "y");
  v->emplace("CONFIG_EVENT_TRACING", "y");
  return std::move(v).value();
}

std::vector<std::string> missing_options(const ConfigCheck& c) {
  std::vector<std::string> out;
  for (const auto& m : c.missing) out.push_back(m.need.option + "=" + m.value);
  return out;
}

TEST(KernelCheck, OurFragmentHasEverything) {
  ConfigCheck c = check_kernel_config(fragment());
  EXPECT_TRUE(c.missing.empty()) << ::testing::PrintToString(missing_options(c));
  EXPECT_TRUE(c.ok(true));
}

TEST(KernelCheck, TheGuestsNeedsComeFromTheFragment) {
  const auto& needs = config_needs();
  auto find = [&](std::string_view option) {
    return std::find_if(needs.begin(), needs.end(), [&](const ConfigNeed& n) { return n.option == option; });
  };
  ASSERT_NE(find("CONFIG_DEVTMPFS_MOUNT"), needs.end());
  EXPECT_EQ(find("CONFIG_DEVTMPFS_MOUNT")->who, "guest");
  EXPECT_EQ(find("CONFIG_VIRTIO_CONSOLE")->accepted, "y,m");
  EXPECT_FALSE(find("CONFIG_ACPI")->required);
  EXPECT_FALSE(find("CONFIG_DEVTMPFS_MOUNT")->required);
  EXPECT_TRUE(find("CONFIG_DEVTMPFS")->required);
  // The fragment's second section (as Debian builds x86) is not a need.
  EXPECT_EQ(find("CONFIG_JUMP_LABEL"), needs.end());
  EXPECT_EQ(find("CONFIG_HIST_TRIGGERS")->who, "hist");
  EXPECT_FALSE(find("CONFIG_HIST_TRIGGERS")->required);
}

TEST(KernelCheck, MissingOptionsAreNamedWithTheirValue) {
  KconfigValues config = fragment();
  config.erase("CONFIG_DEVTMPFS");          // the guest's /init mounts devtmpfs
  config["CONFIG_VIRTIO_CONSOLE"] = "m";    // a module the image loads: fine
  config["CONFIG_ACPI"] = "n";              // halts instead of powering off: fine
  config["CONFIG_HIST_TRIGGERS"] = "n";     // hist, synthetic and sqlhist skip
  ConfigCheck c = check_kernel_config(config);
  EXPECT_THAT(missing_options(c), ::testing::ElementsAre("CONFIG_DEVTMPFS=n", "CONFIG_ACPI=n", "CONFIG_HIST_TRIGGERS=n",
                                                         "CONFIG_HIST_TRIGGERS=n", "CONFIG_HIST_TRIGGERS=n"));
  EXPECT_FALSE(c.ok());
  config["CONFIG_DEVTMPFS"] = "y";
  EXPECT_TRUE(check_kernel_config(config).ok());
  EXPECT_FALSE(check_kernel_config(config).ok(true));
}

TEST(KernelCheck, NoTracingIsRequiredMissing) {
  KconfigValues config = fragment();
  config.erase("CONFIG_FTRACE");
  ConfigCheck c = check_kernel_config(config);
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.missing.front().need.who, "tracing");
}

class KernelConfigPlaces : public base::ScratchDirTest {
 protected:
  void touch(const fs::path& p) {
    fs::create_directories(p.parent_path());
    std::ofstream(p) << "x\n";
  }
};

TEST_F(KernelConfigPlaces, BuildTreeAndItsImage) {
  touch(dir_ / "Makefile");
  touch(dir_ / ".config");
  touch(dir_ / "arch/x86/boot/bzImage");
  EXPECT_EQ(*find_kernel_config(dir_), dir_ / ".config");
  EXPECT_EQ(*find_kernel_config(dir_ / "arch/x86/boot/bzImage"), dir_ / ".config");
}

TEST_F(KernelConfigPlaces, BootStyleAndPlainConfigBeside) {
  touch(dir_ / "boot/vmlinuz-6.12.0-1-amd64");
  touch(dir_ / "boot/config-6.12.0-1-amd64");
  EXPECT_EQ(*find_kernel_config(dir_ / "boot/vmlinuz-6.12.0-1-amd64"), dir_ / "boot/config-6.12.0-1-amd64");
  touch(dir_ / "built/bzImage");
  touch(dir_ / "built/config");
  EXPECT_EQ(*find_kernel_config(dir_ / "built/bzImage"), dir_ / "built/config");
}

TEST_F(KernelConfigPlaces, NoneSaysWhereItLooked) {
  touch(dir_ / "lone/bzImage");
  auto r = find_kernel_config(dir_ / "lone/bzImage");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("no config found"));
  EXPECT_THAT(r.error().message, HasSubstr("config-RELEASE beside vmlinuz-RELEASE"));
  fs::create_directories(dir_ / "tree");
  EXPECT_THAT(find_kernel_config(dir_ / "tree").error().message, HasSubstr("tree: no .config"));
  EXPECT_THAT(find_kernel_config(dir_ / "nothing").error().message, HasSubstr("nothing: no such file"));
}

}  // namespace
}  // namespace tracebed::vm
