// ftracetest 00basic, in spirit, through the control layer.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Basics = TracefsTest;

// basic1.tc: the files every tracefs has, at the top level and (but
// README) in an instance, and what each says when read.
TEST_F(Basics, CoreFilesAreThereAndAnswer) {
  TRACEBED_COVERS("ftracetest: 00basic/basic1.tc");
  const tracefs::Instance top_level = fs().top();
  for (const tracefs::Instance* in : std::initializer_list<const tracefs::Instance*>{&top_level, &inst()}) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    for (const char* f : {"trace", "tracing_on", "trace_pipe"}) EXPECT_TRUE(in->files().has(f)) << f;
    EXPECT_THAT(in->files().read("tracing_on").value(), AnyOf("0\n", "1\n"));
    EXPECT_THAT(in->read_trace().value(), StartsWith("# tracer: "));
  }
  EXPECT_TRUE(top_level.files().has("README"));
  EXPECT_THAT(fs().readme().value(), HasSubstr("tracing_on"));
}

// basic2.tc: every tracer the instance offers can be set, and nop put back.
TEST_F(Basics, EveryAvailableTracerCanBeSet) {
  TRACEBED_COVERS("ftracetest: 00basic/basic2.tc");
  auto tracers = inst().available_tracers();
  ASSERT_OK(tracers);
  ASSERT_THAT(*tracers, Contains("nop"));
  // One function in the filter: function tracers then patch one call site
  // instead of tens of thousands (tens of seconds under TCG).
  if (inst().files().has("set_ftrace_filter")) ASSERT_OK(inst().set_ftrace_filter(std::vector<std::string>{"vfs_read"}));
  for (const std::string& t : *tracers) {
    SCOPED_TRACE(t);
    EXPECT_OK(inst().set_tracer(t));
    EXPECT_EQ(inst().current_tracer().value(), t);
  }
  ASSERT_OK(inst().set_tracer("nop"));
}

TEST_F(Basics, UnknownTracerIsRejectedWithEinval) {
  auto err = inst().files().try_write("current_tracer", "no_such_tracer");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
  EXPECT_EQ(inst().current_tracer().value(), "nop");
}

// basic3.tc: every clock can be selected, and is then the one in [].
TEST_F(Basics, EveryTraceClockCanBeSelected) {
  TRACEBED_COVERS("ftracetest: 00basic/basic3.tc");
  auto clocks = inst().trace_clock();
  ASSERT_OK(clocks);
  for (const std::string& c : clocks->choices) {
    SCOPED_TRACE(c);
    EXPECT_OK(inst().set_trace_clock(c));
    EXPECT_EQ(inst().trace_clock().value().current, c);
  }
}

TEST_F(Basics, TracingOffRecordsNothing) {
  ASSERT_OK(inst().set_tracing_on(false));
  EXPECT_FALSE(inst().tracing_on().value());
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  ASSERT_OK(inst().set_tracing_on(true));
  sh("sleep 0.1");
  EXPECT_THAT(trace_lines(inst()), Not(IsEmpty()));
}

// trace_pipe.tc: trace_pipe consumes what it shows, trace does not.
TEST_F(Basics, TracePipeConsumesTraceDoesNot) {
  TRACEBED_COVERS("ftracetest: 00basic/trace_pipe.tc");
  ASSERT_OK(inst().write_marker("tracebed-pipe-check"));
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("tracebed-pipe-check")));
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("tracebed-pipe-check")));
  auto pipe = inst().read_trace_pipe();
  ASSERT_OK(pipe);
  EXPECT_THAT(*pipe, HasSubstr("tracebed-pipe-check"));
  EXPECT_THAT(trace_lines(inst()), Not(Contains(HasSubstr("tracebed-pipe-check"))));
}

TEST_F(Basics, ClearingTraceEmptiesEveryCpu) {
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("sleep 0.1");
  ASSERT_THAT(trace_lines(inst()), Not(IsEmpty()));
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().clear_trace());
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
}

// ringbuffer_size.tc: resize all CPUs, then one; the others keep theirs.
TEST_F(Basics, BufferResizeTakesEffectPerCpu) {
  TRACEBED_COVERS("ftracetest: 00basic/ringbuffer_size.tc");
  auto cpus = inst().cpus();
  ASSERT_OK(cpus);
  ASSERT_FALSE(cpus->empty());
  ASSERT_OK(inst().set_buffer_size_kb(256));
  uint64_t all = inst().buffer_size().value().kb.value_or(0);
  EXPECT_GE(all, 256u);
  ASSERT_OK(inst().set_buffer_size_kb(cpus->front(), 64));
  uint64_t one = inst().buffer_size(cpus->front()).value().kb.value_or(0);
  EXPECT_GE(one, 64u);
  EXPECT_LT(one, all);
  for (size_t i = 1; i < cpus->size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "cpu" << (*cpus)[i]);
    EXPECT_EQ(inst().buffer_size((*cpus)[i]).value().kb, all);
  }
  if (cpus->size() > 1) {
    EXPECT_TRUE(inst().buffer_size().value().cpus_differ());
  }
  // The total is the sum over CPUs.
  uint64_t sum = 0;
  for (int cpu : *cpus) sum += inst().buffer_size(cpu).value().kb.value_or(0);
  EXPECT_EQ(inst().buffer_total_size_kb().value(), sum);
}

TEST_F(Basics, ZeroSizedBufferIsRejected) {
  // kernel/trace/trace.c tracing_entries_write: "must have at least 1 entry".
  auto err = inst().files().try_write("buffer_size_kb", "0");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// ringbuffer_subbuf_size.tc: the sub-buffer size can grow, and markers
// still come back.
TEST_F(Basics, SubBufferSizeCanBeChanged) {
  TRACEBED_REQUIRE(features::subbuf_size);
  auto before = inst().subbuf_size_kb();
  ASSERT_OK(before);
  ASSERT_OK(inst().set_subbuf_size_kb(8));
  EXPECT_EQ(inst().subbuf_size_kb().value(), 8u);
  EXPECT_EQ(inst().raw_page_size().value(), 8192u);
  ASSERT_OK(inst().write_marker("tracebed-subbuf"));
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("tracebed-subbuf")));
}

// snapshot.tc: a snapshot keeps what was in the buffer when it was taken.
TEST_F(Basics, SnapshotKeepsTheBufferAsItWas) {
  TRACEBED_REQUIRE(features::snapshot);
  ASSERT_OK(inst().write_marker("tracebed-before-snapshot"));
  ASSERT_OK(inst().take_snapshot());
  ASSERT_OK(inst().write_marker("tracebed-after-snapshot"));
  auto snap = inst().read_snapshot();
  ASSERT_OK(snap);
  EXPECT_THAT(*snap, AllOf(HasSubstr("tracebed-before-snapshot"), Not(HasSubstr("tracebed-after-snapshot"))));
  ASSERT_OK(inst().free_snapshot());
}

TEST_F(Basics, ReadmeIsThere) {
  auto readme = fs().readme();
  ASSERT_OK(readme);
  EXPECT_THAT(*readme, HasSubstr("tracing mini-HOWTO"));
}

TEST_F(Basics, OptionsCanBeToggled) {
  ASSERT_OK(inst().set_option("sym-offset", true));
  EXPECT_TRUE(inst().options().value().at("sym-offset"));
  ASSERT_OK(inst().set_option("sym-offset", false));
  EXPECT_FALSE(inst().option("sym-offset").value());
}

TEST_F(Basics, RawPagesAreWholeSubBuffers) {
  ASSERT_OK(inst().write_marker("tracebed-raw"));
  uint32_t page = inst().raw_page_size().value();
  std::string all;
  std::vector<int> cpus = inst().cpus().value();
  for (int cpu : cpus) {
    SCOPED_TRACE(::testing::Message() << "cpu" << cpu);
    auto pages = inst().read_raw_pages(cpu);
    ASSERT_OK(pages);
    EXPECT_EQ(pages->size() % page, 0u);
    all += *pages;
  }
  EXPECT_NE(all.find("tracebed-raw"), std::string::npos);
}

// tracing_cpumask (ftrace/func_cpumask.tc, in spirit): with only CPU 0
// in the mask, every recorded event comes from CPU 0.
TEST_F(Basics, CpumaskLimitsRecordingToThoseCpus) {
  TRACEBED_COVERS("ftracetest: ftrace/func_cpumask.tc");
  TRACEBED_REQUIRE(tracefs::features::tracing_cpumask);
  std::vector<int> cpus = inst().cpus().value();
  if (cpus.size() < 2) GTEST_SKIP() << "needs 2 CPUs: the guest has " << cpus.size();
  ASSERT_OK(inst().set_tracing_cpumask("1"));
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  sh("for i in 1 2 3; do sleep 0.02; done");
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr("[000]")));
}

TEST_F(Basics, SavedCmdlinesNamesTracedTasks) {
  TRACEBED_REQUIRE(tracefs::features::saved_cmdlines);
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  run({"sleep", "0"});
  auto cmdlines = fs().saved_cmdlines();
  ASSERT_OK(cmdlines);
  EXPECT_THAT(*cmdlines, Contains(::testing::Pair(::testing::_, "sleep")));
}

// ftracetest's initialize_system on the guest's top level: what a test
// left there is gone afterwards, triggers and function triggers included.
TEST_F(Basics, ResetUndoesTopLevelState) {
  tracefs::Instance& t = top();
  tracefs::Event sw = t.event("sched", "sched_switch");
  ASSERT_OK(sw.set_filter("prev_pid == 1"));
  ASSERT_OK(sw.add_trigger(tracefs::Trigger::stacktrace().count(2).filter("prev_pid == 2")));
  ASSERT_OK(t.event("sched", "sched_wakeup").enable());
  ASSERT_OK(t.set_event_pids(std::vector<int>{1}));
  if (features().has(tracefs::features::function_triggers))
    ASSERT_OK(t.add_function_trigger(tracefs::FunctionTrigger::traceon("vfs_write").count(3)));
  if (features().has(tracefs::features::kprobes))
    ASSERT_OK(t.files().append("kprobe_events", "p:tracebed/tbprobe vfs_read"));
  ASSERT_OK(t.set_tracing_on(false));

  Status s = tracefs::reset(t);
  ASSERT_OK(s);
  EXPECT_EQ(sw.filter().value(), "none");
  EXPECT_THAT(sw.triggers().value(), IsEmpty());
  EXPECT_THAT(t.set_event().value(), IsEmpty());
  EXPECT_THAT(t.event_pids().value(), IsEmpty());
  EXPECT_THAT(t.ftrace_filter().value().triggers, IsEmpty());
  if (features().has(tracefs::features::kprobes)) {
    EXPECT_EQ(t.files().read("kprobe_events").value(), "");
  }
  EXPECT_TRUE(t.tracing_on().value());
  EXPECT_EQ(t.current_tracer().value(), "nop");
}

}  // namespace
}  // namespace tracebed::suites
