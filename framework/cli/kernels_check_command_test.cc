// `tracebed kernels check` as a user runs it, on a kernel build tree made
// here: its .config is our own kernel's fragment (with what the fragment's
// options select), then with options taken out.
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"
#include "framework/cli/run_tracebed_for_tests.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

class KernelsCheck : public tracebed::base::ScratchDirTest {
 protected:
  // A build tree whose .config is the fragment without `drop` lines.
  void tree(const std::vector<std::string>& drop) {
    std::string config = tracebed::base::source_file("vmimages/kernels/tracebed-7.2/config.fragment");
    for (const auto& line : drop) {
      size_t at = config.find("\n" + line + "\n");
      ASSERT_NE(at, std::string::npos) << line;
      config.erase(at + 1, line.size() + 1);
    }
    // As `make olddefconfig` makes it: the tracers select these two.
    config += "\nCONFIG_TRACING=y\nCONFIG_EVENT_TRACING=y\n";
    std::ofstream(dir_ / "Makefile") << "# Linux\n";
    std::ofstream(dir_ / ".config") << config;
    fs::create_directories(dir_ / "arch/x86/boot");
    std::ofstream(dir_ / "arch/x86/boot/bzImage") << "image\n";
  }
  CliRun check(const std::string& args) { return run_tracebed("kernels check " + args); }
};

TEST_F(KernelsCheck, EverythingThereIsZero) {
  tree({});
  CliRun r = check(dir_.string());
  EXPECT_EQ(r.status, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("config: " + (dir_ / ".config").string() + "\n"));
  EXPECT_THAT(r.out, HasSubstr("nothing missing"));
  EXPECT_EQ(check("--all " + (dir_ / "arch/x86/boot/bzImage").string()).status, 0);
}

TEST_F(KernelsCheck, AMissingGuestOptionIsOneWithTheList) {
  tree({"CONFIG_DEVTMPFS=y", "CONFIG_HIST_TRIGGERS=y"});
  CliRun r = check((dir_ / "arch/x86/boot/bzImage").string());
  EXPECT_EQ(r.status, 1) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("missing, required (the guest or every suite needs it):\n"
                               "  guest            CONFIG_DEVTMPFS is not set, needs y\n"));
  EXPECT_THAT(r.out, HasSubstr("  hist             CONFIG_HIST_TRIGGERS is not set, needs y\n"));
  EXPECT_THAT(r.out, HasSubstr("cannot run the suites as it is"));
}

TEST_F(KernelsCheck, ASuiteOptionAloneFailsOnlyWithAll) {
  tree({"CONFIG_USER_EVENTS=y"});
  CliRun r = check(dir_.string());
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_THAT(r.out, HasSubstr("  user_events      CONFIG_USER_EVENTS is not set, needs y\n"));
  EXPECT_THAT(r.out, Not(HasSubstr("missing, required")));
  EXPECT_EQ(check("--all " + dir_.string()).status, 1);
}

TEST_F(KernelsCheck, NoConfigOrNoSuchKernelIsTwo) {
  CliRun none = check(dir_.string());
  EXPECT_EQ(none.status, 2);
  EXPECT_THAT(none.err, HasSubstr(dir_.string() + ": no .config"));
  CliRun name = check("no-such-kernel");
  EXPECT_EQ(name.status, 2);
  EXPECT_THAT(name.err, HasSubstr("unknown kernel 'no-such-kernel'"));
  EXPECT_EQ(check("").status, 2);
}

}  // namespace
