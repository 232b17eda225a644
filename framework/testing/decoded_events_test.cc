#include "framework/testing/decoded_events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace tracebed::testlib {
namespace {

using ::testing::IsEmpty;

DecodedEvent record(int cpu, std::string name, uint64_t ts) {
  DecodedEvent e;
  e.system = name == "sched_switch" ? "sched" : "eprobes";
  e.name = std::move(name);
  e.cpu = cpu;
  e.ts = ts;
  return e;
}

TEST(UnprobedSources, EveryRecordFollowedByItsProbeRecordIsPaired) {
  std::vector<DecodedEvent> by_page = {record(0, "sched_switch", 1), record(0, "sw", 1), record(0, "sched_switch", 2),
                                       record(0, "sw", 2), record(1, "sched_switch", 3), record(1, "sw", 3)};
  EXPECT_THAT(unprobed_sources(by_page, "sched_switch", "sw"), IsEmpty());
}

// A record with no probe record after it on its CPU is missed, whatever
// the other CPU did meanwhile; a CPU's last one may stand alone.
TEST(UnprobedSources, ARecordTheProbeMissedIsListed) {
  std::vector<DecodedEvent> by_page = {record(0, "sched_switch", 1), record(0, "sched_switch", 2), record(0, "sw", 2),
                                       record(1, "sched_switch", 3), record(0, "sched_switch", 4)};
  auto missed = unprobed_sources(by_page, "sched_switch", "sw");
  ASSERT_EQ(missed.size(), 1u);
  EXPECT_EQ(missed[0]->ts, 1u);
  EXPECT_EQ(missed[0]->cpu, 0);
}

TEST(UnprobedSources, ProbeRecordsAloneAreNotSources) {
  std::vector<DecodedEvent> by_page = {record(0, "sw", 1), record(0, "sched_switch", 2), record(0, "sw", 2)};
  EXPECT_THAT(unprobed_sources(by_page, "sched_switch", "sw"), IsEmpty());
  std::vector<DecodedEvent> two_alone = {record(0, "sched_switch", 1), record(0, "sched_switch", 2),
                                         record(0, "sched_switch", 3)};
  auto missed = unprobed_sources(two_alone, "sched_switch", "sw");
  ASSERT_EQ(missed.size(), 2u);
  EXPECT_EQ(missed[0]->ts, 1u);
  EXPECT_EQ(missed[1]->ts, 2u);
}

}  // namespace
}  // namespace tracebed::testlib
