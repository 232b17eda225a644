// Snapshot restore (framework/vm/guests/snapshot.h) against real QEMU, under the
// qemu launcher or a local libvirt (--tracebed_launcher=libvirt, run under
// ci/private-libvirtd.sh): a restored guest is a working guest with its
// clock stepped to now; guests restored from one file run side by side; a
// snapshot that cannot be used (cut short, changed, from another QEMU)
// costs a warning and a cold boot, never a failure; a panic after a
// restore is reported as after a boot. Each test gets a command line of its
// own (an unused kernel argument), hence a snapshot no other suite running
// at the same time restores from.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/assert_ok.h"
#include "framework/testing/guest_environment.h"
#include "framework/vm/guests/libvirt_domain.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

class Snapshot : public ::testing::Test {
 protected:
  void SetUp() override {
    if (vm::snapshots_disabled_by_environment()) GTEST_SKIP() << "needs snapshots: TRACEBED_NO_SNAPSHOT is set";
    options_ = testlib::environment().options();
    std::string launcher = options_.launcher;
    if (launcher.empty()) {
      const char* l = std::getenv("TRACEBED_LAUNCHER");
      launcher = l && *l ? l : "qemu";
    }
    if (launcher != "qemu" && launcher != "libvirt")
      GTEST_SKIP() << "needs the qemu or libvirt launcher: snapshots are QEMU migration streams";
    if (launcher == "libvirt" && !vm::libvirt_uri_is_local(vm::libvirt_uri(options_.libvirt_uri)))
      GTEST_SKIP() << "needs a local libvirt: the snapshot file is passed to QEMU as a descriptor";
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    options_.cmdline_extra += fmt::format(" tracebed.snapshot_test={}.{}", getpid(), info->name());
  }
  void TearDown() override {
    if (!saved_.empty()) vm::discard_snapshot(vm::snapshot_files(saved_.parent_path().filename().string()));
  }

  // A guest of this test's command line; the first one boots and saves.
  std::unique_ptr<vm::Guest> start() {
    auto g = vm::Guest::boot(options_);
    if (!g) throw std::runtime_error(g.error().message);
    saved_ = (*g)->snapshot_path();
    return std::move(g).value();
  }
  // Starts a guest and returns what it printed on stderr (the warnings).
  std::string start_capturing(std::unique_ptr<vm::Guest>& g) {
    ::testing::internal::CaptureStderr();
    g = start();
    return ::testing::internal::GetCapturedStderr();
  }

  vm::GuestOptions options_;
  fs::path saved_;
};

TEST_F(Snapshot, SecondGuestIsRestoredAndWorks) {
  auto first = start();
  EXPECT_EQ(first->boot_kind(), "boot");
  ASSERT_TRUE(fs::is_regular_file(first->snapshot_path())) << "the cold boot saves its guest";
  EXPECT_GT(first->save_seconds(), 0);
  // The saved guest goes on running after the save.
  auto still = first->run({"true"});
  ASSERT_OK(still);
  first.reset();

  auto second = start();
  EXPECT_EQ(second->boot_kind(), "restore");
  EXPECT_EQ(second->release(), second->expected_release());
  auto r = second->sh("uname -r; date +%s; cat /sys/kernel/tracing/tracing_on");
  ASSERT_OK(r);
  std::istringstream lines(r->out);
  std::string release, guest_now, tracing_on;
  lines >> release >> guest_now >> tracing_on;
  EXPECT_EQ(release, second->expected_release());
  EXPECT_EQ(tracing_on, "1");
  // The clock was stepped from the save's time to now.
  auto host_now = std::chrono::duration_cast<std::chrono::seconds>(
                      std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_NEAR(std::stoll(guest_now), host_now, 30);
}

// Parallel suites restore one file at once: each guest has its own QEMU (or
// libvirt domain, with its own name), console and agent channel.
TEST_F(Snapshot, GuestsRestoredFromOneFileRunSideBySide) {
  start().reset();
  auto a = start();
  auto b = start();
  ASSERT_EQ(a->boot_kind(), "restore");
  ASSERT_EQ(b->boot_kind(), "restore");
  EXPECT_NE(a->console_path(), b->console_path());
  for (int round = 0; round < 20; ++round) {
    SCOPED_TRACE(round);
    auto ra = a->sh(fmt::format("echo a{} > /dev/kmsg; echo a{}", round, round));
    auto rb = b->sh(fmt::format("echo b{} > /dev/kmsg; echo b{}", round, round));
    ASSERT_OK(ra);
    ASSERT_OK(rb);
    EXPECT_EQ(ra->out, fmt::format("a{}\n", round));
    EXPECT_EQ(rb->out, fmt::format("b{}\n", round));
  }
  // Each console is its own guest's: what one guest printed is not in the other's.
  EXPECT_TRUE(a->run({"true"}).ok());
  EXPECT_THAT(a->console_text(), HasSubstr("a19"));
  EXPECT_THAT(b->console_text(), HasSubstr("b19"));
  EXPECT_THAT(a->console_text(), Not(HasSubstr("b19")));
  EXPECT_THAT(b->console_text(), Not(HasSubstr("a19")));
  EXPECT_TRUE(a->check_console().ok());
  EXPECT_TRUE(b->check_console().ok());
}

// A stream cut short while it was written, whose checksum was taken of
// what was written: the checksum passes, QEMU refuses the stream.
TEST_F(Snapshot, TruncatedSnapshotFallsBackToAColdBoot) {
  start().reset();
  ASSERT_TRUE(fs::is_regular_file(saved_));
  fs::resize_file(saved_, fs::file_size(saved_) / 2);
  fs::path meta_file = saved_.parent_path() / "meta.json";
  auto meta = vm::read_snapshot_meta(meta_file);
  ASSERT_OK(meta);
  auto cut = vm::snapshot_checksum(saved_);
  ASSERT_OK(cut);
  meta->checksum = *cut;
  ASSERT_OK(vm::write_snapshot_meta(meta_file, *meta));
  std::unique_ptr<vm::Guest> g;
  std::string warnings = start_capturing(g);
  EXPECT_THAT(warnings, HasSubstr("restoring the"));
  EXPECT_THAT(warnings, HasSubstr("booting cold"));
  EXPECT_EQ(g->boot_kind(), "boot");
  auto r = g->run({"true"});
  EXPECT_OK(r);
  // The cold boot saved a good snapshot again.
  g.reset();
  EXPECT_EQ(start()->boot_kind(), "restore");
}

// A save that fails (here: the state's place is taken by a directory, so
// the finished stream cannot be renamed into it) leaves no snapshot and no
// partial file, and the guest it was taken from is not the one handed out:
// a new one boots cold, does not try to save, and works.
TEST_F(Snapshot, AFailedSaveDiscardsItsGuestAndBootsCold) {
  start().reset();
  ASSERT_TRUE(fs::is_regular_file(saved_));
  vm::discard_snapshot(vm::snapshot_files(saved_.parent_path().filename().string()));
  fs::create_directories(saved_ / "in-the-way");
  std::unique_ptr<vm::Guest> g;
  std::string warnings = start_capturing(g);
  EXPECT_THAT(warnings, HasSubstr("saving a snapshot of the"));
  EXPECT_THAT(warnings, HasSubstr("that guest is discarded and one boots cold without saving"));
  EXPECT_EQ(g->boot_kind(), "boot");
  EXPECT_EQ(g->save_seconds(), 0) << "a failed save is not a saved snapshot";
  auto r = g->run({"cat", "/sys/kernel/tracing/tracing_on"});
  ASSERT_OK(r);
  EXPECT_EQ(r->out, "1\n");
  std::vector<std::string> left;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(saved_.parent_path(), ec))
    if (e.path().filename().string().find("partial") != std::string::npos || e.path().filename() == "meta.json")
      left.push_back(e.path().filename().string());
  EXPECT_THAT(left, ::testing::IsEmpty());
  g.reset();
  fs::remove_all(saved_, ec);
}

// A byte of the saved memory changed on disk: QEMU would load it without a
// word. The checksum finds it, the guest boots cold and saves anew.
TEST_F(Snapshot, ChangedByteInTheSnapshotIsFoundAndBootsCold) {
  start().reset();
  ASSERT_TRUE(fs::is_regular_file(saved_));
  const auto size = fs::file_size(saved_);
  {
    std::fstream f(saved_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(size / 2));
    char byte = 0;
    f.get(byte);
    f.seekp(static_cast<std::streamoff>(size / 2));
    f.put(static_cast<char>(byte ^ 0x20));
  }
  ASSERT_EQ(fs::file_size(saved_), size);
  std::unique_ptr<vm::Guest> g;
  std::string warnings = start_capturing(g);
  EXPECT_THAT(warnings, HasSubstr("not the"));
  EXPECT_THAT(warnings, HasSubstr("it was saved with"));
  EXPECT_THAT(warnings, HasSubstr("booting cold"));
  EXPECT_EQ(g->boot_kind(), "boot");
  EXPECT_OK(g->run({"true"}));
  g.reset();
  EXPECT_EQ(start()->boot_kind(), "restore");
}

TEST_F(Snapshot, SnapshotOfAnotherQemuIsNotTried) {
  start().reset();
  fs::path meta = saved_.parent_path() / "meta.json";
  auto m = vm::read_snapshot_meta(meta);
  ASSERT_OK(m);
  m->qemu_version = "QEMU emulator version 5.2.0 (an older one)";
  ASSERT_TRUE(vm::write_snapshot_meta(meta, *m).ok());
  std::unique_ptr<vm::Guest> g;
  std::string warnings = start_capturing(g);
  EXPECT_THAT(warnings, HasSubstr("saved by QEMU emulator version 5.2.0"));
  EXPECT_EQ(g->boot_kind(), "boot");
}

TEST_F(Snapshot, PanicAfterARestoreIsReportedWithTheConsole) {
  start().reset();
  auto g = start();
  ASSERT_EQ(g->boot_kind(), "restore");
  auto r = g->sh("echo c > /proc/sysrq-trigger");
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.error().message, HasSubstr("Kernel panic - not syncing: sysrq triggered crash"));
  EXPECT_THAT(r.error().message, HasSubstr("Call Trace:"));
  EXPECT_FALSE(g->alive());
  // The snapshot is unharmed: the next guest restores and works.
  g.reset();
  g = start();
  EXPECT_EQ(g->boot_kind(), "restore");
  EXPECT_TRUE(g->run({"true"}).ok());
}

TEST_F(Snapshot, TurnedOffBootsColdAndSavesNothing) {
  options_.snapshot = false;
  auto g = start();
  EXPECT_EQ(g->boot_kind(), "boot");
  EXPECT_FALSE(fs::exists(g->snapshot_path()));
}

}  // namespace
}  // namespace tracebed
