// A panic, a dead agent, a hung guest, a killed QEMU, a guest out of memory,
// a console flood and a bad kernel path each end as an error that says what
// happened, within a bounded time; the next guest works.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/cli/run_tracebed_for_tests.h"
#include "framework/testing/assert_ok.h"
#include "framework/testing/guest_environment.h"

namespace tracebed {
namespace {

using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using Clock = std::chrono::steady_clock;

std::unique_ptr<vm::Guest> boot() {
  vm::GuestOptions options = testlib::environment().options();
  auto g = vm::Guest::boot(options);
  if (!g) throw std::runtime_error(g.error().message);
  return std::move(g).value();
}

TEST(Faults, PanicFailsWithTheConsoleExcerpt) {
  auto g = boot();
  auto t0 = Clock::now();
  auto r = g->sh("echo c > /proc/sysrq-trigger");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("kernel panic in the"));
  EXPECT_THAT(r.error().message, HasSubstr("Kernel panic - not syncing: sysrq triggered crash"));
  EXPECT_THAT(r.error().message, HasSubstr("Call Trace:"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(30));
  EXPECT_FALSE(g->alive());
  // The guest is gone; further calls fail fast with the same story.
  auto again = g->run({"true"});
  ASSERT_FALSE(again.ok());
  EXPECT_THAT(again.error().message, HasSubstr("sysrq triggered crash"));
}

TEST(Faults, KilledAgentIsReported) {
  auto g = boot();
  auto r = g->sh("kill -9 $(pidof tracebed-agent)");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("agent"));
  EXPECT_FALSE(g->alive());
}

TEST(Faults, StoppedAgentTimesOutAndKillsTheGuest) {
  auto g = boot();
  // The agent is stopped before it can reply: only the host's deadline ends this.
  auto t0 = Clock::now();
  auto r = g->run({"sh", "-c", "kill -STOP $(pidof tracebed-agent)"}, std::chrono::seconds(2));
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("no reply within the timeout"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(60));
  EXPECT_FALSE(g->alive());
}

TEST(Faults, WarningOnTheConsoleIsAFailure) {
  auto g = boot();
  // Write a WARNING-shaped line to the console the way the kernel would.
  auto r = g->sh("echo 'WARNING: CPU: 0 PID: 1 at tracebed/smoke.c:1 injected+0x0/0x0' > /dev/kmsg");
  ASSERT_OK(r);
  auto st = g->check_console();
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("kernel WARNING"));
  EXPECT_TRUE(g->check_console().ok()) << "a fault is reported once";
  EXPECT_TRUE(g->alive());
}

// This process's children whose command is a QEMU (the qemu launcher's
// guests are its children).
std::vector<pid_t> qemu_children() {
  std::vector<pid_t> out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream children(task.path() / "children");
    for (pid_t pid; children >> pid;) {
      std::ifstream comm("/proc/" + std::to_string(pid) + "/comm");
      std::string name;
      if (std::getline(comm, name) && name.starts_with("qemu-system")) out.push_back(pid);
    }
  }
  return out;
}

// QEMU killed under a running command (the OOM killer of the host, a user):
// the command fails at once with how QEMU ended and the console's tail.
TEST(Faults, KilledQemuFailsTheCommandWithTheConsoleTail) {
  if (testlib::environment().options().launcher == "libvirt") GTEST_SKIP() << "libvirt's QEMU is not our child";
  auto g = boot();
  const auto qemus = qemu_children();
  ASSERT_EQ(qemus.size(), 1u) << "one guest, one QEMU";
  std::thread killer([pid = qemus[0]] {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    ::kill(pid, SIGKILL);
  });
  auto t0 = Clock::now();
  auto r = g->run({"sleep", "60"});
  killer.join();
  ASSERT_FALSE(r.ok()) << "sleep 60 finished in a killed guest";
  EXPECT_THAT(r.error().message, HasSubstr("QEMU was killed by signal 9"));
  EXPECT_THAT(r.error().message, HasSubstr("--- console tail"));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(20));
  EXPECT_FALSE(g->alive());
}

// The guest out of memory: the OOM killer ends the command that ate it (the
// agent lives on), and the test fails with the kernel's report.
TEST(Faults, OutOfMemoryIsAFailureWithTheKernelsReport) {
  auto g = boot();
  // tail keeps the "last line" of /dev/zero, which never ends, in memory.
  auto r = g->sh("tail /dev/zero", std::chrono::seconds(120));
  ASSERT_OK(r);
  EXPECT_EQ(r->signal, SIGKILL) << "status " << r->exit_code << ": " << r->err;
  auto st = g->check_console();
  ASSERT_FALSE(st.ok()) << "the OOM killer's report was not seen";
  EXPECT_THAT(st.error().message, HasSubstr("out of memory in the"));
  EXPECT_THAT(st.error().message, HasSubstr("invoked oom-killer"));
  EXPECT_THAT(st.error().message, HasSubstr("Killed process"));
  EXPECT_TRUE(g->alive());
  EXPECT_OK(g->run({"true"}));
}

// A guest that floods its console with more than the host keeps of it: the
// host holds a bounded window, the guest still answers, and a fault printed
// after the flood is still found.
TEST(Faults, ConsoleFloodIsBoundedAndLaterFaultsAreFound) {
  auto g = boot();
  // 17 MiB of lines through the serial console, past the 16 MiB kept.
  auto r = g->sh("yes 'tracebed console flood, a line of about fifty bytes' | head -c 17825792 > /dev/console",
                 std::chrono::seconds(600));
  ASSERT_OK(r);
  ASSERT_EQ(r->exit_code, 0) << r->err;
  ASSERT_OK(g->sh("echo 'WARNING: CPU: 0 PID: 1 at tracebed/flood.c:1 after_the_flood+0x0/0x0' > /dev/kmsg"));
  auto st = g->check_console();
  ASSERT_FALSE(st.ok()) << "the WARNING after the flood was not seen";
  EXPECT_THAT(st.error().message, HasSubstr("after_the_flood"));
  EXPECT_LE(g->console_text().size(), size_t{16} << 20);
  EXPECT_THAT(g->console_text(), HasSubstr("a line of about fifty bytes"));
  EXPECT_GE(std::filesystem::file_size(g->console_path()), size_t{17} << 20);
  EXPECT_OK(g->run({"true"}));
}

TEST(Faults, BadKernelPathSaysSo) {
  vm::GuestOptions options;
  options.kernel = "/no/such/bzImage";
  auto g = vm::Guest::boot(options);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("/no/such/bzImage: no such file"));
}

TEST(Faults, NotAKernelSaysSo) {
  vm::GuestOptions options;
  options.kernel = "/bin/sh";
  auto g = vm::Guest::boot(options);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("not a bzImage"));
}

TEST(Faults, MissingQemuSaysSo) {
  vm::GuestOptions options = testlib::environment().options();
  options.qemu = "qemu-system-does-not-exist";
  options.accel = "tcg";
  auto g = vm::Guest::boot(options);
  ASSERT_FALSE(g.ok());
  EXPECT_THAT(g.error().message, HasSubstr("cannot start qemu-system-does-not-exist"));
}

// A kernel without ACPI cannot power off: `poweroff -f` halts it and QEMU
// stays up. acpi=off makes a Debian kernel one (no pm_power_off on x86).
// stop() sees the halt on the console and ends QEMU at once, without an
// error, instead of waiting out its timeout.
TEST(Faults, HaltedGuestWithoutAcpiStopsAtOnce) {
  vm::GuestOptions options = testlib::environment().options();
  options.cmdline_extra += (options.cmdline_extra.empty() ? "" : " ") + std::string("acpi=off");
  options.snapshot = false;
  auto g = vm::Guest::boot(options);
  ASSERT_OK(g);
  ASSERT_OK((*g)->run({"true"}));
  auto t0 = Clock::now();
  EXPECT_OK((*g)->stop(std::chrono::seconds(60)));
  EXPECT_LT(Clock::now() - t0, std::chrono::seconds(15));
  EXPECT_FALSE((*g)->alive());
  EXPECT_THAT((*g)->console_text(), HasSubstr("reboot: Power off not available: System halted instead"));
}

// `tracebed run` as a user meets it on this kernel: the guest command's own
// status comes back (tracebed --help "Exit status"), a command that outlives
// --timeout is 124, and a guest that dies under the command is 1 with its
// console.
TEST(Faults, RunExitsWithTheGuestCommandsStatus) {
  using cli::test::run_tracebed;
  const std::string run = "run --kernel " + testlib::environment().options().kernel + " ";
  auto three = run_tracebed(run + "-- sh -c 'echo out; exit 3'");
  EXPECT_EQ(three.status, 3) << three.err;
  EXPECT_EQ(three.out, "out\n");
  auto slow = run_tracebed(run + "--timeout 2 -- sleep 60");
  EXPECT_EQ(slow.status, 124) << slow.err;
  auto panic = run_tracebed(run + "-- sh -c 'echo c > /proc/sysrq-trigger'");
  EXPECT_EQ(panic.status, 1) << panic.err;
  EXPECT_THAT(panic.err, HasSubstr("sysrq triggered crash"));
}

// A command that is not in the guest is named as the user gave it, not by
// the file its error output went through.
TEST(Faults, RunNamesACommandThatIsNotThere) {
  using cli::test::run_tracebed;
  auto r = run_tracebed("run --kernel " + testlib::environment().options().kernel + " -- /bin/nonexistent");
  EXPECT_EQ(r.status, 127) << r.err;
  EXPECT_THAT(r.err, HasSubstr("/bin/nonexistent: not found in the guest"));
  EXPECT_THAT(r.err, Not(HasSubstr(".tracebed-run-")));
}

// A kernel whose init never starts the agent (and never panics: busybox
// sleeps as PID 1) is found by one boot, within one boot timeout: exit
// status 125 and one message with the console's last line, not a failure
// per test of every suite.
TEST(Faults, AKernelThatNeverReachesTheAgentIsFoundOnce) {
  using cli::test::run_tracebed;
  const auto t0 = Clock::now();
  auto r = run_tracebed("test --kernel " + testlib::environment().options().kernel +
                        " --suites smoke,basics --boot-timeout 30 --cmdline 'rdinit=/bin/busybox -- sleep 100000'");
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  EXPECT_THAT(r.err, HasSubstr("did not boot, so nothing was tested"));
  EXPECT_THAT(r.err, HasSubstr("guest did not reach the agent within 30 s"));
  // loglevel=6 and earlyprintk: the boot is there up to the init it ran.
  EXPECT_THAT(r.err, HasSubstr("the last line on the console: \""));
  EXPECT_THAT(r.err, HasSubstr("Run /bin/busybox as init process"));
  EXPECT_THAT(r.out, Not(HasSubstr("failed:")));
  EXPECT_THAT(r.err, Not(HasSubstr("[1/")));  // no suite was started
  EXPECT_LT(seconds, 2 * 30 + 30) << "one boot timeout, not one per suite";
}

// In a matrix, a kernel that does not boot is its column's one result and
// the other kernel's results are complete. The bad kernel is the good one's
// bzImage cut in half: its decompressor stops, nothing panics.
TEST(Faults, MatrixGoesOnPastAKernelThatDoesNotBoot) {
  using cli::test::run_tracebed;
  namespace fs = std::filesystem;
  const std::string good = testlib::environment().options().kernel;
  auto catalogue = vm::Catalogue::load();
  ASSERT_OK(catalogue);
  auto kernel = catalogue->resolve(good);
  ASSERT_OK(kernel);
  auto files = vm::fetch_kernel(*catalogue, *kernel);
  ASSERT_OK(files);
  fs::path dir = fs::temp_directory_path() / fmt::format("tracebed-matrix-bad-{}", getpid());
  fs::create_directories(dir);
  fs::path bad = dir / "bzImage";
  {
    auto whole = base::read_file(files->vmlinuz);
    ASSERT_OK(whole);
    std::ofstream(bad, std::ios::binary) << whole->substr(0, whole->size() / 2);
  }
  auto r = run_tracebed(fmt::format("matrix --kernels {},{} --suites smoke --boot-timeout 30 --out {}", good,
                                    bad.string(), (dir / "mx").string()));
  EXPECT_EQ(r.status, 125) << r.out << r.err;
  auto report = base::read_file(dir / "mx" / "report.md");
  ASSERT_OK(report);
  EXPECT_THAT(*report, HasSubstr("did not boot"));
  EXPECT_THAT(r.out, HasSubstr(good));
  EXPECT_THAT(r.out, ContainsRegex(good + " \\([^)]*\\): [1-9][0-9]* passed, [0-9]+ skipped, 0 failed"));
  EXPECT_THAT(r.err, HasSubstr(bad.string() + ": did not boot"));
  fs::remove_all(dir);
}

TEST(Faults, NextGuestStillWorks) {
  auto g = boot();
  auto r = g->run({"uname", "-r"});
  ASSERT_OK(r);
  EXPECT_EQ(r->out, g->expected_release() + "\n");
}

}  // namespace
}  // namespace tracebed
