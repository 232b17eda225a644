// The exit statuses every command shares (tracebed --help "Exit status"),
// each produced as a user would meet it. The guest cases run a stand-in
// QEMU from PATH and a stand-in bzImage, so no guest boots: one QEMU that
// exits at once (a kernel that does not boot: 125) and one that never
// answers (a suite killed at --timeout: 124).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files_for_tests.h"
#include "framework/cli/run_tracebed_for_test.h"

namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

TEST(ExitStatus, UsageErrorsAreTwo) {
  CliRun unknown_flag = run_tracebed("report --no-such-flag x.dat");
  EXPECT_EQ(unknown_flag.status, 2) << unknown_flag.err;
  EXPECT_THAT(unknown_flag.err, HasSubstr("--no-such-flag"));
  EXPECT_EQ(run_tracebed("").status, 2);
  EXPECT_EQ(run_tracebed("no-such-command").status, 2);
  EXPECT_EQ(run_tracebed("run").status, 2);  // no command
  CliRun kernel = run_tracebed("run --kernel no-such-kernel -- true");
  EXPECT_EQ(kernel.status, 2);
  EXPECT_THAT(kernel.err, HasSubstr("--kernel: unknown kernel 'no-such-kernel'"));
  CliRun copy = run_tracebed("run --copy-in /no/such/file:/srv/x -- true");
  EXPECT_EQ(copy.status, 2);
  EXPECT_THAT(copy.err, HasSubstr("--copy-in /no/such/file: no such file"));
  EXPECT_EQ(run_tracebed("test --kernel no-such-kernel --suites smoke").status, 2);
  EXPECT_EQ(run_tracebed("kernels fetch no-such-kernel").status, 2);
  EXPECT_EQ(run_tracebed("cache prune --older-than soon --dry-run").status, 2);
}

// A scratch cache, a stand-in bzImage and a stand-in QEMU first on PATH.
class StandInGuest : public tracebed::base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    // The setup header a bzImage starts with: "HdrS" at 0x202 and, at
    // 0x20e, the kernel_version string's offset from 0x200.
    std::string image(64 * 1024, '\0');
    image.replace(0x202, 4, "HdrS");
    image[0x20e] = 0x00;
    image[0x20f] = 0x01;
    image.replace(0x300, 20, "6.0.0-stand-in #1 x");
    std::ofstream(dir_ / "bzImage", std::ios::binary) << image;
    std::ofstream(dir_ / "not-a-kernel") << "hello\n";
    fs::create_directories(dir_ / "bin");
    saved_path_ = std::getenv("PATH");
    setenv("PATH", ((dir_ / "bin").string() + ":" + saved_path_).c_str(), 1);
    setenv("TRACEBED_CACHE", (dir_ / "cache").c_str(), 1);
    setenv("TRACEBED_ACCEL", "tcg", 1);
  }
  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    unsetenv("TRACEBED_CACHE");
    unsetenv("TRACEBED_ACCEL");
    ScratchDirTest::TearDown();
  }
  // `body` runs for every QEMU invocation but --version.
  void qemu(const std::string& body) {
    fs::path q = dir_ / "bin" / "qemu-system-x86_64";
    std::ofstream(q) << "#!/bin/sh\n"
                     << "if [ \"$1\" = --version ]; then echo 'QEMU emulator version 7.2.0'; exit 0; fi\n"
                     << body << "\n";
    fs::permissions(q, fs::perms::owner_all);
  }
  std::string saved_path_;
};

TEST_F(StandInGuest, AKernelThatDoesNotBootIs125) {
  qemu("echo 'qemu: no boot for you' >&2; exit 1");
  CliRun not_kernel = run_tracebed("run --kernel " + (dir_ / "not-a-kernel").string() + " -- true");
  EXPECT_EQ(not_kernel.status, 125) << not_kernel.err;
  EXPECT_THAT(not_kernel.err, HasSubstr("not a bzImage"));
  CliRun dies = run_tracebed("run --kernel " + (dir_ / "bzImage").string() + " -- true");
  EXPECT_EQ(dies.status, 125) << dies.err;
  EXPECT_THAT(dies.err, HasSubstr("QEMU exited with status 1"));
  // The suites: every test failed only because its guest did not boot.
  CliRun suites = run_tracebed("test --kernel " + (dir_ / "bzImage").string() + " --suites smoke --filter 'Smoke.*'");
  EXPECT_EQ(suites.status, 125) << suites.out << suites.err;
  EXPECT_THAT(suites.out, HasSubstr("guest failed"));
}

TEST_F(StandInGuest, ASuiteKilledAtItsTimeoutIs124) {
  qemu("exec sleep 60");  // the same process: dies with its parent (PR_SET_PDEATHSIG)
  CliRun r = run_tracebed("test --kernel " + (dir_ / "bzImage").string() +
                          " --suites smoke --filter 'Smoke.*' --timeout 2 -j 1");
  EXPECT_EQ(r.status, 124) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("did not finish within 2 s"));
}

}  // namespace
