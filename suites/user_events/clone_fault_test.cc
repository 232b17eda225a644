// user_events at the edges of the producer's memory: a CLONE_VM child that
// shares the enable word (selftests/user_events/abi_test.c clones) and
// writes whose payload page is paged out or gone (ftrace_test.c write_fault).
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/user_events/producer.h"
#include "suites/user_events/user_events_fixture.h"

namespace tracebed::suites {
namespace {

TEST_F(UserEvents, CloneVmChildSeesTheSharedEnableBit) {
  TRACEBED_COVERS("user_events: abi_test.c/clones");
  // abi_test.c clones: a CLONE_VM child shares the address space, so the
  // kernel's updates of the parent's word are the child's too. Each cycle
  // the child waits for the bit to be set, says so in w7, and waits for it
  // to clear; its exit must leave the parent's registration working.
  UserEventDef def(unique("clone"));
  def.u32("v");
  constexpr int kCycles = 5;
  std::vector<std::string> script = {reg("r", def)};
  for (int k = 0; k < kCycles; ++k)
    script.insert(script.end(), {"clone w0 31 60000", "waitbit w7 0 1 60000", "wait", "bit w0"});
  script.insert(script.end(), {"waitbit w0 31 1 60000", "write r 7"});
  BackgroundProducer p(script);
  ASSERT_TRUE(p.wait_for("reg", "r").ok());
  Event ev = tracefs::user_event(inst(), def.name());
  for (int k = 0; k < kCycles; ++k) {
    SCOPED_TRACE(fmt::format("cycle {}", k));
    ASSERT_TRUE(p.wait_for("clone", "w0", k).ok());
    ASSERT_OK(ev.enable());
    EXPECT_TRUE(p.wait_for("waitbit", "w7", k).ok()) << "the child never saw the bit set";
    ASSERT_OK(ev.disable());
    ProducerLine reaped = p.wait_for("wait", "-", k);
    EXPECT_EQ(reaped.value("status"), "0") << "1: the child never saw the bit set, 2: never saw it clear";
    EXPECT_EQ(p.wait_for("bit", "w0", k).value("value"), "0x0");
  }
  // The children have exited: the shared mm's enabler must still be there.
  ASSERT_OK(ev.enable());
  ProducerRun run = p.finish();
  EXPECT_TRUE(run.get("waitbit", "w0").ok()) << "the bit no longer follows after the clones exited";
  EXPECT_TRUE(run.get("write", "r").ok()) << run.text;
  auto got = stop_and_decode(def.name());
  ASSERT_THAT(got, SizeIs(1));
  EXPECT_EQ(int_field(got[0], "v"), 7);
  EXPECT_EQ(got[0].pid, run.pid);
}

TEST_F(UserEvents, FaultedPayloadPagesZeroFillOrFailWithoutARecord) {
  TRACEBED_COVERS("user_events: ftrace_test.c/write_fault");
  // ftrace_test.c write_fault: the payload comes from its own page. Paged
  // out (an untouched page in its place) it faults in as zeros and the
  // write works;
  // unmapped the write is EFAULT and must leave no partial record; the next
  // ordinary write works.
  UserEventDef def(unique("fault"));
  def.u32("seq").u64("anon");
  auto ev = create_enabled(def);
  ASSERT_OK(ev);
  std::mt19937_64 rng(20261127);
  constexpr int kRounds = 100;
  std::vector<std::pair<int64_t, uint64_t>> expected;  // (seq, anon) in write order
  std::vector<std::string> script = {reg("r", def)};
  for (int n = 1; n <= kRounds; ++n) {
    uint64_t v = n == 1 ? ~uint64_t{0} : n == 2 ? uint64_t{1} << 63 : rng();
    script.push_back(fmt::format("faultwrite r mapped {} {}", n, v));
    script.push_back(fmt::format("faultwrite r paged {} {}", n, v));
    script.push_back(fmt::format("faultwrite r unmapped {} {}", n, v));
    script.push_back(fmt::format("write r {} {}", n, v));
    expected.insert(expected.end(), {{n, v}, {0, 0}, {n, v}});
  }
  ProducerRun run = run_producer(script);
  ASSERT_TRUE(run.get("reg", "r").ok()) << run.text;
  for (int n = 0; n < kRounds; ++n) {
    SCOPED_TRACE(fmt::format("round {}", n + 1));
    EXPECT_TRUE(run.get("faultwrite", "r", 3 * n).ok()) << run.get("faultwrite", "r", 3 * n).line;
    EXPECT_TRUE(run.get("faultwrite", "r", 3 * n + 1).ok()) << run.get("faultwrite", "r", 3 * n + 1).line;
    EXPECT_EQ(run.get("faultwrite", "r", 3 * n + 2).result, "EFAULT") << run.get("faultwrite", "r", 3 * n + 2).line;
    EXPECT_TRUE(run.get("write", "r", n).ok()) << "the write after a fault failed";
  }
  // In time order, not by seq: the paged-out records carry seq 0.
  auto got = decoded(tracefs::user_event(inst(), def.name()));
  ASSERT_THAT(got, SizeIs(expected.size())) << "an EFAULT write left a record, or a good one left none";
  for (size_t i = 0; i < got.size(); ++i) {
    SCOPED_TRACE(::testing::PrintToString(got[i]));
    EXPECT_EQ(int_field(got[i], "seq"), expected[i].first);
    EXPECT_EQ(static_cast<uint64_t>(int_field(got[i], "anon")), expected[i].second);
    EXPECT_EQ(got[i].pid, run.pid);
  }
  EXPECT_OK(ev->destroy());
}

}  // namespace
}  // namespace tracebed::suites
