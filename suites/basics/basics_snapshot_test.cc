// The snapshot buffer and the switches around it: taking a snapshot leaves
// tracing_on alone (snapshot.tc), and one taken while tracing_cpumask is
// empty leaves every CPU's buffer writable afterwards (snapshot1.tc: the
// per-CPU record_disabled counts of the two buffers got mixed up).
#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

class Snapshot : public TracefsTest {
 public:
  Snapshot() : TracefsTest({features::snapshot}) {}
};

TEST_F(Snapshot, TakingOneLeavesTracingOnAsItWas) {
  TRACEBED_COVERS("ftracetest: 00basic/snapshot.tc");
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().take_snapshot());
  EXPECT_THAT(inst().read_snapshot().value(), HasSubstr("Snapshot is allocated"));
  EXPECT_FALSE(inst().tracing_on().value()) << "a snapshot turned tracing on";
  // Off means off: a marker now is refused or dropped, and not in trace.
  (void)inst().files().try_write("trace_marker", "tracebed-while-off");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());

  ASSERT_OK(inst().set_tracing_on(true));
  ASSERT_OK(inst().write_marker("tracebed-while-on"));
  ASSERT_OK(inst().take_snapshot());
  EXPECT_TRUE(inst().tracing_on().value()) << "a snapshot turned tracing off";
  // The swap took the marker into the snapshot, and tracing goes on.
  EXPECT_THAT(inst().read_snapshot().value(), HasSubstr("tracebed-while-on"));
  ASSERT_OK(inst().write_marker("tracebed-after"));
  EXPECT_THAT(trace_lines(inst()), ElementsAre(HasSubstr("tracebed-after")));
  ASSERT_OK(inst().free_snapshot());
}

TEST_F(Snapshot, TakenWithAnEmptyCpumaskEveryCpuStillRecords) {
  TRACEBED_COVERS("ftracetest: 00basic/snapshot1.tc");
  TRACEBED_REQUIRE(features::tracing_cpumask);
  std::string mask = inst().tracing_cpumask().value();
  ASSERT_OK(inst().set_tracing_cpumask("0"));
  ASSERT_OK(inst().take_snapshot());
  ASSERT_OK(inst().set_tracing_cpumask(mask));
  ASSERT_OK(inst().set_tracing_on(true));
  ASSERT_OK(inst().write_marker("test input 1"));
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("test input 1")));
  // A marker written on each CPU is recorded on that CPU.
  std::vector<int> cpus = inst().cpus().value();
  std::vector<::testing::Matcher<const DecodedEvent&>> expected{HasEvent("ftrace/print", FieldEq("buf", "test input 1\n"))};
  for (int cpu : cpus) {
    std::string text = "tracebed-on-cpu" + std::to_string(cpu);
    sh(fmt::format("taskset {:x} sh -c 'echo {} > {}'", 1u << cpu, text, inst().path("trace_marker")));
    expected.push_back(AllOf(HasEvent("ftrace/print", FieldEq("buf", text + "\n")),
                             ::testing::Field(&DecodedEvent::cpu, cpu)));
  }
  EXPECT_THAT(decoded_only({"ftrace", "print"}), UnorderedElementsAreArray(expected));
  ASSERT_OK(inst().free_snapshot());
}

// A sub-buffer size set while a snapshot is allocated is the snapshot
// buffer's too (trace.c buffer_subbuf_size_write resizes both): after a
// snapshot swaps the two buffers, buffer_subbuf_size_kb still reads the
// size set, the marker written before the swap is in the snapshot, and
// one written after it is in the buffer.
TEST_F(Snapshot, SubBufferSizeSetWithASnapshotHoldsAcrossTheSwap) {
  if (!inst().files().has("buffer_subbuf_size_kb")) GTEST_SKIP() << "needs buffer_subbuf_size_kb (6.8+)";
  ASSERT_OK(inst().take_snapshot());
  const uint64_t was = inst().subbuf_size_kb().value();
  const uint64_t size = was * 2;
  ASSERT_OK(inst().set_subbuf_size_kb(size));
  ASSERT_EQ(inst().subbuf_size_kb().value(), size);
  ASSERT_OK(inst().write_marker("tbsubbuf-before"));
  ASSERT_OK(inst().take_snapshot());
  EXPECT_EQ(inst().subbuf_size_kb().value(), size) << "the buffer swapped in has the old size";
  ASSERT_OK(inst().write_marker("tbsubbuf-after"));
  EXPECT_THAT(inst().read_snapshot().value(), HasSubstr("tbsubbuf-before"));
  EXPECT_THAT(trace_lines(inst()), ElementsAre(HasSubstr("tbsubbuf-after")));
  ASSERT_OK(inst().free_snapshot());
}

}  // namespace
}  // namespace tracebed::suites
