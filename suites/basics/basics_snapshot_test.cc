// The snapshot buffer and the switches around it: taking a snapshot leaves
// tracing_on alone (snapshot.tc), and one taken while tracing_cpumask is
// empty leaves every CPU's buffer writable afterwards (snapshot1.tc: the
// per-CPU record_disabled counts of the two buffers got mixed up).
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

}  // namespace
}  // namespace tracebed::suites
