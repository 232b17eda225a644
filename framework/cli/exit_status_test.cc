// The exit statuses every command shares (tracebed --help "Exit status"),
// each produced as a user would meet it. The guest cases run a stand-in
// QEMU from PATH and a stand-in bzImage, so no guest boots: one QEMU that
// exits at once (a kernel that does not boot: 125) and one that never
// answers (a suite killed at --timeout: 124).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <chrono>
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
  for (const char* guest : {"--cpus 0", "--cpus 256", "--memory 16", "--memory 99999999999"}) {
    CliRun bad = run_tracebed(std::string("run ") + guest + " -- true");
    EXPECT_EQ(bad.status, 2) << guest << ": " << bad.err;
    EXPECT_THAT(bad.err, HasSubstr(std::string(guest).substr(0, std::string(guest).find(' ')))) << guest;
  }
  EXPECT_EQ(run_tracebed("kernels fetch no-such-kernel").status, 2);
  EXPECT_EQ(run_tracebed("cache prune --older-than soon --dry-run").status, 2);
}

// A scratch cache, a stand-in bzImage and a stand-in QEMU first on PATH.
class StandInGuest : public tracebed::base::ScratchDirTest {
 protected:
  void SetUp() override {
    ScratchDirTest::SetUp();
    std::ofstream(dir_ / "bzImage", std::ios::binary) << tracebed::vm::stand_in_bzimage("6.0.0-stand-in #1 x", 64 * 1024);
    std::ofstream(dir_ / "not-a-kernel") << "hello\n";
    fs::create_directories(dir_ / "bin");
    saved_path_ = std::getenv("PATH");
    setenv("PATH", ((dir_ / "bin").string() + ":" + saved_path_).c_str(), 1);
    // A short cache path: under the scratch directory the guests' socket
    // paths would be too long, and their run directories (kept with the
    // logs of a failed boot) would go to /tmp, out of TearDown's reach.
    char cache[] = "/tmp/tb-cache-XXXXXX";
    ASSERT_NE(::mkdtemp(cache), nullptr);
    cache_ = cache;
    setenv("TRACEBED_CACHE", cache, 1);
    setenv("TRACEBED_ACCEL", "tcg", 1);
  }
  void TearDown() override {
    setenv("PATH", saved_path_.c_str(), 1);
    unsetenv("TRACEBED_CACHE");
    unsetenv("TRACEBED_ACCEL");
    fs::remove_all(cache_);
    ScratchDirTest::TearDown();
  }
  fs::path cache_;
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
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  qemu("echo 'qemu: no boot for you' >&2; exit 1");
  CliRun not_kernel = run_tracebed("run --kernel " + (dir_ / "not-a-kernel").string() + " -- true");
  EXPECT_EQ(not_kernel.status, 125) << not_kernel.err;
  EXPECT_THAT(not_kernel.err, HasSubstr("not a bzImage"));
  CliRun dies = run_tracebed("run --kernel " + (dir_ / "bzImage").string() + " -- true");
  EXPECT_EQ(dies.status, 125) << dies.err;
  EXPECT_THAT(dies.err, HasSubstr("QEMU exited with status 1"));
  // The suites: the one boot before them says so, and none starts.
  CliRun suites = run_tracebed("test --kernel " + (dir_ / "bzImage").string() + " --suites smoke --filter 'Smoke.*'");
  EXPECT_EQ(suites.status, 125) << suites.out << suites.err;
  EXPECT_THAT(suites.err, HasSubstr("did not boot, so nothing was tested: QEMU exited with status 1"));
  EXPECT_THAT(suites.err, Not(HasSubstr("[1/")));
}

TEST_F(StandInGuest, AShellOnAKernelThatDoesNotBootIs125) {
  qemu("echo 'qemu: no boot for you' >&2; exit 1");
  CliRun shell = run_tracebed("shell --kernel " + (dir_ / "bzImage").string() + " </dev/null");
  EXPECT_EQ(shell.status, 125) << shell.err;
  EXPECT_THAT(shell.err, HasSubstr("QEMU exited with status 1"));
}

// A QEMU that never starts a guest is found by the one boot before the
// suites, within a bounded time (the wait for its agent socket), not once
// per suite. (Faults.AKernelThatNeverReachesTheAgentIsFoundOnce has a real
// guest that boots and never starts the agent.)
TEST_F(StandInGuest, AKernelThatHangsIs125Once) {
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  qemu("exec sleep 60");  // the same process: dies with its parent (PR_SET_PDEATHSIG)
  const auto t0 = std::chrono::steady_clock::now();
  CliRun r = run_tracebed("test --kernel " + (dir_ / "bzImage").string() +
                          " --suites smoke,basics --boot-timeout 3 -j 1");
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("did not boot, so nothing was tested: QEMU did not open the agent socket"));
  EXPECT_THAT(r.err, Not(HasSubstr("[1/")));
}

// Ctrl-C or SIGTERM of `test` or `matrix` while a guest runs: the command
// ends, and so do its suite binaries and their QEMUs (a stand-in QEMU that
// writes its pid and sleeps); `matrix` keeps what it had for a rerun.
class Signalled : public StandInGuest {
 protected:
  // Starts `tracebed ARGS`, waits for its QEMU, sends `sig`, and returns
  // tracebed's exit status; the QEMU must be gone soon after.
  int signal_while_guest_runs(const std::string& args, int sig) {
    const fs::path qemu_pid = dir_ / "qemu.pid";
    qemu("echo $$ > " + qemu_pid.string() + "; exec sleep 120");
    const std::string cmd = std::string(TRACEBED_BINARY_DIR) + "/tracebed " + args + " >" +
                            (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    pid_t pid = fork();
    if (pid == 0) {
      execl("/bin/sh", "sh", "-c", ("exec " + cmd).c_str(), static_cast<char*>(nullptr));
      _exit(127);
    }
    pid_t qemu = 0;
    for (int i = 0; i < 600 && qemu == 0; ++i) {
      usleep(100000);
      std::ifstream(qemu_pid) >> qemu;
    }
    EXPECT_NE(qemu, 0) << "no guest started within 60 s";
    kill(pid, sig);
    int status = 0;
    waitpid(pid, &status, 0);
    bool gone = false;
    for (int i = 0; i < 100 && !gone; ++i) {
      gone = qemu == 0 || (::kill(qemu, 0) != 0 && errno == ESRCH);
      if (!gone) usleep(100000);
    }
    EXPECT_TRUE(gone) << "its QEMU (pid " << qemu << ") outlived tracebed by 10 s";
    if (!gone && qemu > 0) ::kill(qemu, SIGKILL);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
};

TEST_F(Signalled, TestEndsItsGuestsOnSigterm) {
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  int status = signal_while_guest_runs(
      "test --kernel " + (dir_ / "bzImage").string() + " --suites smoke --filter 'Smoke.*' -j 1", SIGTERM);
  EXPECT_EQ(status, 128 + SIGTERM);
}

TEST_F(Signalled, MatrixEndsItsGuestsOnCtrlCAndKeepsWhatWasDone) {
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  const std::string out = (dir_ / "mx").string();
  int status = signal_while_guest_runs("matrix --kernels " + (dir_ / "bzImage").string() +
                                           " --suites smoke --filter 'Smoke.*' -j 1 --out " + out,
                                       SIGINT);
  EXPECT_EQ(status, 128 + SIGINT);
  EXPECT_TRUE(fs::is_directory(out + "/runs")) << "the output directory a rerun resumes from";
}

}  // namespace
