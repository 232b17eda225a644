#include "framework/vm/guests/console.h"

#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::vm {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Captured from a debian-6.12 guest after `echo c > /proc/sysrq-trigger`
// (serial console, so lines end in \r\n).
constexpr std::string_view kPanic =
    "tracebed-init: agent on /dev/vport0p1\r\n"
    "tracebed-agent: serving on /dev/vport0p1\r\n"
    "[    2.139807] sysrq: Trigger a crash\r\n"
    "[    2.140249] Kernel panic - not syncing: sysrq triggered crash\r\n"
    "[    2.140590] CPU: 0 UID: 0 PID: 155 Comm: sh Not tainted 6.12.107+deb13-cloud-amd64 #1  Debian 6.12.107-1\r\n"
    "[    2.141057] Call Trace:\r\n"
    "[    2.141525]  <TASK>\r\n"
    "[    2.141770]  dump_stack_lvl+0x5d/0x80\r\n"
    "[    2.142002]  panic+0x118/0x2db\r\n";

TEST(Console, FindsThePanicWithContext) {
  auto f = find_fault(kPanic);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FaultKind::panic);
  EXPECT_TRUE(f->fatal());
  EXPECT_EQ(f->line, "[    2.140249] Kernel panic - not syncing: sysrq triggered crash");
  EXPECT_THAT(f->excerpt, HasSubstr("sysrq: Trigger a crash\n"));
  EXPECT_THAT(f->excerpt, HasSubstr("panic+0x118/0x2db"));
  EXPECT_THAT(f->excerpt, Not(HasSubstr("\r")));
  EXPECT_EQ(kPanic.substr(f->end, 14), "[    2.140590]");
}

TEST(Console, ScanningResumesAfterAReportedFault) {
  std::string text = "[ 1.0] WARNING: CPU: 0 PID: 1 at x.c:1 f+0x0/0x0\r\n[ 1.1] fine\r\n";
  auto f = find_fault(text);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FaultKind::warning);
  EXPECT_FALSE(f->fatal());
  EXPECT_FALSE(find_fault(text, f->end).has_value());
  text += "[ 1.2] BUG: kernel NULL pointer dereference, address: 0000000000000000\r\n";
  auto g = find_fault(text, f->end);
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->kind, FaultKind::bug);
}

TEST(Console, OopsAndHungTasks) {
  EXPECT_EQ(find_fault("[ 3.0] Oops: int3: 0000 [#1] PREEMPT SMP NOPTI\n")->kind, FaultKind::oops);
  EXPECT_EQ(find_fault("[ 3.0] general protection fault, probably for non-canonical address\n")->kind, FaultKind::oops);
  EXPECT_EQ(find_fault("[ 3.0] INFO: task sh:12 blocked for more than 120 seconds.\n")->kind, FaultKind::hung_task);
  EXPECT_FALSE(find_fault("[ 0.1] Booting paravirtualized kernel on bare hardware\n").has_value());
}

// The OOM killer in a debian-6.12 guest (`tail /dev/zero`, suites/faults):
// its first line, and 81 lines later what it killed. The memory table
// between is stood in for by numbered lines.
std::string oom_report() {
  std::string text =
      "[    4.828147] tail invoked oom-killer: gfp_mask=0x440dc0(GFP_KERNEL_ACCOUNT|__GFP_COMP|__GFP_ZERO), order=0, "
      "oom_score_adj=0\r\n"
      "[    4.831871] CPU: 1 UID: 0 PID: 156 Comm: tail Not tainted 6.12.107+deb13-cloud-amd64 #1  Debian 6.12.107-1\r\n";
  for (int i = 0; i < 79; ++i) text += "[    4.839975] memory table line " + std::to_string(i) + "\r\n";
  text +=
      "[    4.844666] Out of memory: Killed process 156 (tail) total-vm:441368kB, anon-rss:439168kB, file-rss:0kB, "
      "shmem-rss:1324kB, UID:0 pgtables:904kB oom_score_adj:0\r\n"
      "tracebed-agent: after\r\n";
  return text;
}

TEST(Console, OutOfMemoryIsReportedWithWhatWasKilled) {
  const std::string text = oom_report();
  auto f = find_fault(text);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->kind, FaultKind::out_of_memory);
  EXPECT_FALSE(f->fatal()) << "the kernel goes on after the OOM killer";
  EXPECT_EQ(fault_name(f->kind), "out of memory");
  EXPECT_THAT(f->line, HasSubstr("tail invoked oom-killer: gfp_mask=0x440dc0"));
  EXPECT_THAT(f->excerpt, HasSubstr("Comm: tail"));
  EXPECT_THAT(f->excerpt, HasSubstr("\n[...]\n[    4.844666] Out of memory: Killed process 156 (tail)"));
  EXPECT_THAT(f->excerpt, Not(HasSubstr("memory table line 78")));
  EXPECT_THAT(f->excerpt, Not(HasSubstr("tracebed-agent: after")));
  EXPECT_THAT(f->excerpt, Not(HasSubstr("\r")));
}

// Captured from a debian-6.12 guest booted with acpi=off, told to power
// off by Guest::stop() (suites/faults/faults_test.cc).
constexpr std::string_view kHalted =
    "[    2.892092] on the kernel command line\r\n"
    "tracebed-init: agent on /dev/vport0p1\r\n"
    "tracebed-agent: serving on /dev/vport0p1\r\n"
    "[    3.696143] reboot: Power off not available: System halted instead\r\n";

TEST(Console, HaltInsteadOfPowerOffIsRecognised) {
  EXPECT_TRUE(halted_instead_of_power_off(kHalted));
  size_t halt = kHalted.find("Power off not available");
  ASSERT_NE(halt, std::string_view::npos);
  // Only text at or after `from` counts: an earlier halt is not this one.
  EXPECT_FALSE(halted_instead_of_power_off(kHalted, halt + 1));
  EXPECT_FALSE(halted_instead_of_power_off(kHalted.substr(0, halt)));
  EXPECT_TRUE(halted_instead_of_power_off("[ 9.9] reboot: System halted\r\n"));
  // A powered-off guest says "Power down" and QEMU exits by itself.
  EXPECT_FALSE(halted_instead_of_power_off("[ 9.9] reboot: Power down\r\n"));
  EXPECT_FALSE(halted_instead_of_power_off(kPanic));
}

TEST(Console, TailKeepsTheLastLines) {
  EXPECT_EQ(console_tail("a\r\nb\r\nc\r\n", 2), "b\nc\n");
  EXPECT_EQ(console_tail("only", 5), "only");
  EXPECT_EQ(console_tail("", 5), "");
}

}  // namespace
}  // namespace tracebed::vm
