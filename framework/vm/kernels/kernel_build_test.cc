#include "framework/vm/kernels/kernel_build.h"

#include <filesystem>
#include <fstream>
#include <random>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/base/files_for_tests.h"
#include "framework/base/own_mount_for_tests.h"
#include "framework/testing/assert_ok.h"
#include "framework/vm/kernels/kernel_build_steps.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;
using ::testing::ElementsAre;
using ::testing::FieldsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(ParseKconfigValues, ReadsValuesAndNotSetComments) {
  auto v = parse_kconfig_values(
      "# a comment\n"
      "CONFIG_FTRACE=y\n"
      "\n"
      "  CONFIG_LOG_BUF_SHIFT=17  \n"
      "CONFIG_LOCALVERSION=\"-tb\"\n"
      "# CONFIG_MODULES is not set\n"
      "# Tracers\n",
      "frag");
  ASSERT_TRUE(v.ok()) << v.error().message;
  EXPECT_EQ(*v, (KconfigValues{{"CONFIG_FTRACE", "y"},
                               {"CONFIG_LOG_BUF_SHIFT", "17"},
                               {"CONFIG_LOCALVERSION", "\"-tb\""},
                               {"CONFIG_MODULES", "n"}}));
}

TEST(ParseKconfigValues, LaterAssignmentWinsAsInKconfig) {
  auto v = parse_kconfig_values("CONFIG_PREEMPT=n\nCONFIG_PREEMPT=y\n", "frag");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->at("CONFIG_PREEMPT"), "y");
}

TEST(ParseKconfigValues, BadLinesNameFileAndLine) {
  for (const char* bad : {"FTRACE=y", "CONFIG_FTRACE", "CONFIG_FTRACE=", "CONFIG_FT RACE=y"}) {
    SCOPED_TRACE(bad);
    auto v = parse_kconfig_values(std::string("CONFIG_X=y\n") + bad + "\n", "my.fragment");
    ASSERT_FALSE(v.ok());
    EXPECT_THAT(v.error().message, HasSubstr("my.fragment:2: not a config line"));
  }
}

TEST(ParseKconfigValues, TheRecipeFragmentParsesAndAsksForTheTracingOptions) {
  auto text = base::read_file(std::filesystem::path(TRACEBED_SOURCE_DIR) / "vmimages/kernels/tracebed-7.2/config.fragment");
  ASSERT_TRUE(text.ok()) << text.error().message;
  auto v = parse_kconfig_values(*text, "config.fragment");
  ASSERT_TRUE(v.ok()) << v.error().message;
  for (const char* option : {"CONFIG_USER_EVENTS", "CONFIG_BOOT_CONFIG", "CONFIG_BOOTTIME_TRACING",
                             "CONFIG_VIRTIO_CONSOLE", "CONFIG_SERIAL_8250_CONSOLE", "CONFIG_HIST_TRIGGERS"}) {
    SCOPED_TRACE(option);
    ASSERT_TRUE(v->count(option));
    EXPECT_EQ(v->at(option), "y");
  }
}

TEST(CheckConfig, ReportsDroppedAndChangedOptions) {
  // Shaped like a .config after olddefconfig dropped what it could not satisfy.
  auto config = parse_kconfig_values(
      "CONFIG_FTRACE=y\n"
      "# CONFIG_PREEMPT_TRACER is not set\n"
      "CONFIG_LOG_BUF_SHIFT=14\n"
      "CONFIG_MODULES=y\n",
      ".config");
  auto wanted = parse_kconfig_values(
      "CONFIG_FTRACE=y\n"
      "CONFIG_PREEMPT_TRACER=y\n"
      "CONFIG_USER_EVENTS=y\n"
      "CONFIG_LOG_BUF_SHIFT=17\n"
      "# CONFIG_MODULES is not set\n"
      "# CONFIG_KVM is not set\n",
      "frag");
  ASSERT_TRUE(config.ok() && wanted.ok());
  // In std::map order; "got" is "n" for an option the .config lacks.
  EXPECT_THAT(check_config(*wanted, *config),
              ElementsAre(FieldsAre("CONFIG_LOG_BUF_SHIFT", "17", "14"), FieldsAre("CONFIG_MODULES", "n", "y"),
                          FieldsAre("CONFIG_PREEMPT_TRACER", "y", "n"), FieldsAre("CONFIG_USER_EVENTS", "y", "n")));
}

TEST(CheckConfig, NothingToReportWhenEverythingIsAsAsked) {
  KconfigValues config{{"CONFIG_FTRACE", "y"}, {"CONFIG_A", "y"}};
  EXPECT_THAT(check_config({{"CONFIG_FTRACE", "y"}, {"CONFIG_B", "n"}}, config), IsEmpty());
}

// Shaped like kernel/trace/Kconfig (7.2).
constexpr std::string_view kKconfig = R"kconfig(config IRQSOFF_TRACER
	bool "Interrupts-off Latency Tracer"
	default n
	depends on TRACE_IRQFLAGS_SUPPORT
	select TRACE_IRQFLAGS

config PREEMPT_TRACER
	bool "Preemption-off Latency Tracer"
	default n
	depends on PREEMPTION
	select GENERIC_TRACER
	help
	  depends on NOTHING here: help text

config FPROBE
	bool "Kernel Function Probe (fprobe)"
	depends on HAVE_FUNCTION_GRAPH_FREGS && HAVE_FTRACE_GRAPH_FUNC
	depends on DYNAMIC_FTRACE_WITH_ARGS # a comment
	default n

menuconfig FTRACE
	bool "Tracers"
	depends on TRACING_SUPPORT && \
		!ARCH_NO_FTRACE

config FPROBE_EVENTS
	depends on FPROBE
)kconfig";

TEST(KconfigDepends, TheSymbolsOwnDependsOnLines) {
  EXPECT_THAT(kconfig_depends(kKconfig, "PREEMPT_TRACER"), ElementsAre("PREEMPTION"));
  EXPECT_THAT(kconfig_depends(kKconfig, "FPROBE"),
              ElementsAre("HAVE_FUNCTION_GRAPH_FREGS && HAVE_FTRACE_GRAPH_FUNC", "DYNAMIC_FTRACE_WITH_ARGS"));
  EXPECT_THAT(kconfig_depends(kKconfig, "FTRACE"), ElementsAre("TRACING_SUPPORT && !ARCH_NO_FTRACE"));
  EXPECT_THAT(kconfig_depends(kKconfig, "FPROBE_EVENTS"), ElementsAre("FPROBE"));
  EXPECT_THAT(kconfig_depends(kKconfig, "USER_EVENTS"), IsEmpty());
}

// Shaped like lib/Kconfig.debug and kernel/Kconfig.preempt (7.2).
constexpr std::string_view kBlocks = R"kconfig(menu "Compile-time checks and compiler options"

config DEBUG_INFO
	bool

if DEBUG_INFO

config DEBUG_INFO_BTF
	bool "Generate BTF type information"
	depends on !DEBUG_INFO_SPLIT && !DEBUG_INFO_REDUCED
	depends on BPF_SYSCALL # a comment

endif # DEBUG_INFO

endmenu

menu "Tracers"
	depends on TRACING_SUPPORT

choice
	prompt "Preemption Model"
	depends on !ARCH_NO_PREEMPT

config PREEMPT
	bool "Preemptible Kernel (Low-Latency Desktop)"
	depends on !PREEMPT_RT

endchoice

config AFTER
	bool "outside the choice"
endmenu

config OUTSIDE
	bool "outside everything"
)kconfig";

TEST(KconfigDepends, EnclosingIfMenuAndChoiceCount) {
  EXPECT_THAT(kconfig_depends(kBlocks, "DEBUG_INFO_BTF"),
              ElementsAre("DEBUG_INFO", "!DEBUG_INFO_SPLIT && !DEBUG_INFO_REDUCED", "BPF_SYSCALL"));
  EXPECT_THAT(kconfig_depends(kBlocks, "PREEMPT"), ElementsAre("TRACING_SUPPORT", "!ARCH_NO_PREEMPT", "!PREEMPT_RT"));
  EXPECT_THAT(kconfig_depends(kBlocks, "AFTER"), ElementsAre("TRACING_SUPPORT"));
  EXPECT_THAT(kconfig_depends(kBlocks, "OUTSIDE"), IsEmpty());
}

TEST(AnnotateDepends, EachSymbolWithItsValue) {
  KconfigValues config{{"CONFIG_HAVE_FOO", "y"}, {"CONFIG_BAR", "m"}};
  EXPECT_EQ(annotate_depends("HAVE_FOO && !(BAR || BAZ) && m", config), "HAVE_FOO=y && !(BAR=m || BAZ=n) && m");
}

TEST(BuildRecipeKey, CoversSourcePinBaseConfigAndFragment) {
  BuildRecipe r;
  r.source = {"linux-source-7.2", "7.2.13-1", std::string(64, 'a'), "all"};
  r.fragment_text = "CONFIG_FTRACE=y\n";
  std::string key = build_recipe_key(r);
  EXPECT_EQ(build_recipe_key(r), key);  // deterministic
  auto changed = [&](auto edit) {
    BuildRecipe c = r;
    edit(c);
    return build_recipe_key(c) != key;
  };
  EXPECT_TRUE(changed([](BuildRecipe& c) { c.source.version = "7.2.14-1"; }));
  EXPECT_TRUE(changed([](BuildRecipe& c) { c.source.sha256 = std::string(64, 'b'); }));
  EXPECT_TRUE(changed([](BuildRecipe& c) { c.base_config = "allnoconfig"; }));
  EXPECT_TRUE(changed([](BuildRecipe& c) { c.fragment_text += "CONFIG_USER_EVENTS=y\n"; }));
  // Where the fragment lives does not matter, only what it says.
  EXPECT_FALSE(changed([](BuildRecipe& c) { c.fragment = "/elsewhere/config.fragment"; }));
}

TEST(KernelCacheDir, BuildKernelsAreCachedUnderTheirRecipeHash) {
  KernelSpec a;
  a.name = "tb";
  a.build = BuildRecipe{};
  a.build->fragment_text = "CONFIG_FTRACE=y\n";
  KernelSpec b = a;
  b.build->fragment_text = "CONFIG_FTRACE=y\nCONFIG_USER_EVENTS=y\n";
  EXPECT_NE(kernel_cache_dir(a), kernel_cache_dir(b));
  EXPECT_EQ(kernel_cache_dir(a).parent_path(), kernel_cache_dir(b).parent_path());
  EXPECT_TRUE(kernel_cache_dir(a).filename().string().starts_with("tb-"));
}

TEST(BuildKernel, RefusesABadFragmentBeforeDownloadingAnything) {
  KernelSpec spec;
  spec.name = "tb";
  spec.build = BuildRecipe{};
  spec.build->fragment = "inline.fragment";
  spec.build->fragment_text = "CONFIG_FTRACE=y\nUSER_EVENTS=y\n";
  Catalogue c;
  auto r = build_kernel(c, spec, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("inline.fragment:2: not a config line"));
}

TEST(BuildKernel, NotABuildKernel) {
  KernelSpec spec;
  spec.name = "debian-6.12";
  Catalogue c;
  auto r = build_kernel(c, spec, {});
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("not a build kernel"));
}

// The cache's disk full while a built kernel is copied into its cache entry
// (the staged directory on a 16 kB tmpfs of the child's own): a clear error
// with the disk's words, and the half-written staged directory is gone.
class KernelStage : public base::ScratchDirTest {};

TEST_F(KernelStage, FullDiskIsAClearErrorAndLeavesNothing) {
  const fs::path tree = dir_ / "tree";
  fs::create_directories(tree / "arch" / "x86" / "boot");
  std::string image(300000, '\0');
  std::mt19937 random(7);
  for (char& c : image) c = static_cast<char>(random());
  std::ofstream(tree / "arch" / "x86" / "boot" / "bzImage", std::ios::binary) << image;
  std::ofstream(tree / ".config") << "CONFIG_FTRACE=y\n";
  const fs::path disk = dir_ / "kernels";
  auto run = base::run_on_own_mount(disk, "size=16k", false, [&] {
    KernelMake km("stand-in", dir_ / "build.log", "work tree kept in " + tree.string());
    km.set_tree(tree, tree);
    auto staged = km.stage(disk / "stand-in.partial1", false);
    return (staged ? "staged " + *staged : "error " + staged.error().message) + "\nleft: " +
           std::to_string(std::distance(fs::directory_iterator(disk), fs::directory_iterator()));
  });
  if (!run.setup_error.empty()) GTEST_SKIP() << "needs a mount namespace of its own (root): " << run.setup_error;
  EXPECT_THAT(run.result, HasSubstr("error stand-in: copying bzImage and .config to " + (disk / "stand-in.partial1").string()));
  EXPECT_THAT(run.result, HasSubstr("No space left on device"));
  EXPECT_THAT(run.result, ::testing::EndsWith("\nleft: 0")) << "the staged directory was left";
}

// A work tree reused after a failed build is checked against the hashes
// taken when it was unpacked: a file whose bytes changed, or one that went,
// is named; a marker from before the hashes is not trusted.
TEST_F(KernelStage, ReusedTreeIsCheckedAgainstItsHashes) {
  const fs::path tree = dir_ / "linux-source";
  fs::create_directories(tree / "kernel" / "trace");
  std::ofstream(tree / "Makefile") << "VERSION = 7\n";
  std::ofstream(tree / "kernel" / "trace" / "trace.c") << "int tracing_on;\n";
  std::ofstream(tree / "kernel" / "trace" / "ring_buffer.c") << "int ring_buffer;\n";
  ASSERT_OK(record_tree_hashes(tree));
  EXPECT_OK(check_tree_hashes(tree));
  // A build's own new files are not the tree's: they do not count.
  std::ofstream(tree / "kernel" / "trace" / "trace.o") << "object";
  EXPECT_OK(check_tree_hashes(tree));
  std::ofstream(tree / "kernel" / "trace" / "trace.c") << "int tracing_off;\n";
  auto changed = check_tree_hashes(tree);
  ASSERT_FALSE(changed.ok());
  EXPECT_THAT(changed.error().message, HasSubstr("changed since it was unpacked: ./kernel/trace/trace.c: FAILED"));
  fs::remove(tree / "kernel" / "trace" / "ring_buffer.c");
  EXPECT_THAT(check_tree_hashes(tree).error().message, HasSubstr("./kernel/trace/ring_buffer.c: FAILED open or read"));
  std::ofstream(tree / ".unpacked", std::ios::trunc) << "\n";  // what an older tracebed wrote
  EXPECT_THAT(check_tree_hashes(tree).error().message, HasSubstr("holds no hashes"));
}

}  // namespace
}  // namespace tracebed::vm
