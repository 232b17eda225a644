// `tracebed bpf-ctx` offline, from the formats recordings of two kernels
// store: their sched_switch formats differ in the ID and in the signedness
// of the two char arrays (5.10 signed:1, 6.12 signed:0; see the stored
// format files with `trace-cmd dump --events`), and so must the structs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/cli/run_tracebed_for_tests.h"

namespace tracebed::cli::test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::string recording(const std::string& name) {
  return std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/" + name + ".dat";
}

TEST(BpfCtxCommand, SchedSwitchDiffersBetween510And612WhereTheFormatsDo) {
  CliRun k510 = run_tracebed("bpf-ctx -i " + recording("s6-k5.10-v7zstd-all") + " sched/sched_switch");
  CliRun k612 = run_tracebed("bpf-ctx -i " + recording("s11-k6.12-v7zstd-all") + " sched/sched_switch");
  ASSERT_EQ(k510.status, 0) << k510.err;
  ASSERT_EQ(k612.status, 0) << k612.err;
  auto a = base::split_lines(k510.out);
  auto b = base::split_lines(k612.out);
  ASSERT_EQ(a.size(), b.size()) << k510.out << k612.out;
  std::vector<std::string> differ;
  for (size_t i = 0; i < a.size(); ++i)
    if (a[i] != b[i]) differ.push_back(std::string(a[i]) + " | " + std::string(b[i]));
  EXPECT_THAT(differ, ElementsAre(HasSubstr("(ID 308)"), HasSubstr("signed char prev_comm[16];"),
                                  HasSubstr("signed char next_comm[16];")));
  EXPECT_THAT(k510.out, HasSubstr("\tsigned char prev_comm[16];"));
  EXPECT_THAT(k612.out, HasSubstr("\tunsigned char prev_comm[16];"));
  EXPECT_THAT(k612.out, HasSubstr("(ID 310)"));
}

TEST(BpfCtxCommand, AnEventTheFileDoesNotStoreIsAUsageError) {
  CliRun r = run_tracebed("bpf-ctx -i " + recording("s6-k5.10-v7zstd-all") + " sched/tb_no_such_event");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("stores no format of sched/tb_no_such_event"));
}

TEST(BpfCtxCommand, OneSourceIsNeeded) {
  CliRun r = run_tracebed("bpf-ctx sched/sched_switch");
  EXPECT_EQ(r.status, 2);
  EXPECT_THAT(r.err, HasSubstr("give one of -i TRACE_DAT, -f FORMAT or --kernel K"));
}

TEST(BpfCtxCommand, ProgramReadsEveryFieldPastTheCommonOnes) {
  CliRun r = run_tracebed("bpf-ctx --program -i " + recording("s11-k6.12-v7zstd-all") + " syscalls/sys_enter_openat");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("SEC(\"tracepoint/syscalls/sys_enter_openat\")"));
  for (const char* f : {"__syscall_nr", "dfd", "filename", "flags", "mode"})
    EXPECT_THAT(r.out, HasSubstr(std::string("= ctx->") + f + ";"));
  EXPECT_THAT(r.out, ::testing::Not(HasSubstr("ctx->common_pid;")));
}

}  // namespace
}  // namespace tracebed::cli::test
