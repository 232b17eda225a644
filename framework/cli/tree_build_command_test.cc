// `tracebed kernels build --tree`, `test --kernel DIR` and `bisect` as a
// user runs them, on a made-up kernel tree whose `make` is a script on PATH:
// it logs each call, makes .config from the base and what was appended,
// drops options named DROPPED (as Kconfig drops what it cannot satisfy) and
// fails `bzImage` when the tree holds a file BROKEN. No compiler runs.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"
#include "framework/cli/run_tracebed_for_tests.h"
#include "framework/vm/kernels/bzimage_for_tests.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

std::string slurp(const fs::path& file) {
  auto text = tracebed::base::read_file(file);
  return text ? *text : std::string();
}

constexpr const char* kFakeMake = R"(#!/bin/sh
out=.
for a in "$@"; do case "$a" in O=*) out=${a#O=};; esac; done
echo "$*" >> "$FAKE_MAKE_LOG"
for a in "$@"; do
  case "$a" in
    tinyconfig|defconfig) mkdir -p "$out"; echo "CONFIG_64BIT=y" > "$out/.config";;
    olddefconfig) grep -v DROPPED "$out/.config" > "$out/.config.new"; mv "$out/.config.new" "$out/.config";;
    bzImage)
      [ -e BROKEN ] && { echo "kernel/trace/trace.c:1: error: planted"; exit 2; }
      mkdir -p "$out/arch/x86/boot"; cp "$FAKE_BZIMAGE" "$out/arch/x86/boot/bzImage";;
  esac
done
exit 0
)";

class TreeBuild : public tracebed::base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    tree_ = dir_ / "linux";
    fs::create_directories(tree_ / "kernel");
    std::ofstream(tree_ / "Makefile") << "# Linux\n";
    std::ofstream(tree_ / "Kconfig") << "mainmenu \"Linux\"\n";
    fs::create_directories(dir_ / "bin");
    std::ofstream(dir_ / "bin" / "make") << kFakeMake;
    fs::permissions(dir_ / "bin" / "make", fs::perms::owner_all);
    std::ofstream(dir_ / "bzImage", std::ios::binary) << tracebed::vm::stand_in_bzimage("7.2.13-tree (fake) #", 0x400);
    std::ofstream(dir_ / "quick.config") << "CONFIG_FTRACE=y\nCONFIG_HIST_TRIGGERS=y\n";
    old_path_ = std::getenv("PATH");
    setenv("PATH", ((dir_ / "bin").string() + ":" + old_path_).c_str(), 1);
    setenv("TRACEBED_CACHE", (dir_ / "cache").c_str(), 1);
    setenv("FAKE_MAKE_LOG", (dir_ / "make.log").c_str(), 1);
    setenv("FAKE_BZIMAGE", (dir_ / "bzImage").c_str(), 1);
  }
  void TearDown() override {
    setenv("PATH", old_path_.c_str(), 1);
    unsetenv("TRACEBED_CACHE");
    ScratchDirTest::TearDown();
  }
  CliRun build(const std::string& extra = "") {
    return run_tracebed(fmt::format("kernels build --tree {} --fragment {} --jobs 1 {}", tree_.string(),
                                    (dir_ / "quick.config").string(), extra));
  }
  std::string make_log() { return slurp(dir_ / "make.log"); }
  int count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
    return n;
  }
  fs::path tree_;
  std::string old_path_;
};

TEST_F(TreeBuild, BuildsOutOfTreeUnderTheCacheAndConfiguresOnce) {
  CliRun r = build();
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  // "NAME RELEASE DIR", DIR what --kernel takes.
  EXPECT_THAT(r.out, StartsWith("linux-"));
  EXPECT_THAT(r.out, HasSubstr(" 7.2.13-tree " + (dir_ / "cache" / "trees").string()));
  std::string kernel_dir = r.out.substr(r.out.rfind(' ') + 1);
  kernel_dir.pop_back();
  EXPECT_TRUE(fs::exists(fs::path(kernel_dir) / "bzImage"));
  EXPECT_THAT(slurp(fs::path(kernel_dir) / ".config"), HasSubstr("CONFIG_HIST_TRIGGERS=y"));
  // Everything went to O=, nothing into the tree.
  EXPECT_THAT(make_log(), HasSubstr("O=" + (fs::path(kernel_dir).parent_path() / "build").string() + " tinyconfig"));
  EXPECT_FALSE(fs::exists(tree_ / ".config"));
  EXPECT_FALSE(fs::exists(tree_ / "arch"));

  // Again: make runs, Kconfig's base does not; the same directory.
  CliRun again = build();
  ASSERT_EQ(again.status, 0) << again.err;
  EXPECT_EQ(again.out, r.out);
  EXPECT_EQ(count(make_log(), "tinyconfig"), 1) << make_log();
  EXPECT_EQ(count(make_log(), "bzImage"), 2) << make_log();
}

TEST_F(TreeBuild, AnotherFragmentOrBaseIsAnotherBuildDirectory) {
  CliRun a = build();
  std::ofstream(dir_ / "quick.config", std::ios::app) << "CONFIG_KPROBES=y\n";
  CliRun b = build();
  CliRun c = build("--base defconfig");
  ASSERT_EQ(a.status + b.status + c.status, 0) << a.err << b.err << c.err;
  EXPECT_NE(a.out, b.out);
  EXPECT_NE(b.out, c.out);
  EXPECT_THAT(make_log(), HasSubstr(" defconfig"));
}

TEST_F(TreeBuild, AnOptionKconfigDroppedFailsTheBuildNamingIt) {
  std::ofstream(dir_ / "quick.config", std::ios::app) << "CONFIG_DROPPED=y\n";
  CliRun r = build();
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("CONFIG_DROPPED: the fragment asks for y, the .config has it not set"));
  EXPECT_THAT(make_log(), Not(HasSubstr("bzImage")));
}

TEST_F(TreeBuild, ACompileErrorIs125WithTheMessage) {
  std::ofstream(tree_ / "BROKEN") << "\n";
  CliRun r = build();
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("make bzImage failed"));
  EXPECT_THAT(r.err, HasSubstr("error: planted"));
}

TEST_F(TreeBuild, BadTreesAndOptionsAreUsageErrors) {
  CliRun r = run_tracebed(
      fmt::format("kernels build --tree {} --fragment {}", dir_.string(), (dir_ / "quick.config").string()));
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("is not a kernel source tree"));
  std::ofstream(tree_ / ".config") << "CONFIG_64BIT=y\n";
  r = build();
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("mrproper"));
  fs::remove(tree_ / ".config");
  r = build("--base olddefconfig");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("--config FILE"));
  r = run_tracebed("kernels build");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("a catalogue name or --tree DIR"));
}

TEST_F(TreeBuild, ASourceTreeGivenWhereABuiltKernelBelongsSaysHowToBuildIt) {
  CliRun r = run_tracebed("kernels info " + tree_.string());
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("is a kernel source tree: `tracebed test --kernel"));
  CliRun built = build();
  ASSERT_EQ(built.status, 0) << built.err;
  std::string kernel_dir = built.out.substr(built.out.rfind(' ') + 1);
  kernel_dir.pop_back();
  r = run_tracebed("kernels info " + kernel_dir);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("release:  7.2.13-tree"));
}

// The step `git bisect run` runs: a commit that does not build is skipped (125).
TEST_F(TreeBuild, ABisectStepThatDoesNotBuildIsSkipped) {
  ASSERT_EQ(std::system(fmt::format("cd {} && git init -q && git add -A && git -c user.name=t -c user.email=t@t "
                                    "commit -qm base",
                                    tree_.string())
                            .c_str()),
            0);
  std::ofstream(tree_ / "BROKEN") << "\n";
  fs::path state = dir_ / "state";
  fs::create_directories(state / "steps");
  std::ofstream(state / "args.json") << fmt::format(
      R"({{"tree": "{}", "fragment": "{}", "base": "tinyconfig", "config": "", "jobs": 1, "good": "x", "bad": "y",
          "suites": ["marker"], "filter": "Marker.*", "timeout": 60}})",
      tree_.string(), (dir_ / "quick.config").string());
  CliRun r = run_tracebed("bisect-step " + state.string());
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  EXPECT_THAT(slurp(state / "steps.tsv"), HasSubstr("\tskip\t"));
  EXPECT_THAT(slurp(state / "log.txt"), HasSubstr("skip (build"));
  // No state to read: git must stop (>= 128), not count it as bad.
  r = run_tracebed("bisect-step " + (dir_ / "nowhere").string());
  EXPECT_EQ(r.status, 128);
}

TEST_F(TreeBuild, BisectChecksItsArgumentsBeforeBuilding) {
  CliRun r = run_tracebed(fmt::format("bisect --tree {} --good a --bad b --kernel-fragment {} -- 'Marker.*'",
                                      tree_.string(), (dir_ / "quick.config").string()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("rev-parse --show-toplevel"));
  ASSERT_EQ(std::system(fmt::format("cd {} && git init -q && git add -A && git -c user.name=t -c user.email=t@t "
                                    "commit -qm base",
                                    tree_.string())
                            .c_str()),
            0);
  r = run_tracebed(fmt::format("bisect --tree {} --good nosuch --bad HEAD --kernel-fragment {} -- 'Marker.*'",
                               tree_.string(), (dir_ / "quick.config").string()));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--good nosuch: not a commit of"));
  EXPECT_TRUE(make_log().empty());
}

}  // namespace
