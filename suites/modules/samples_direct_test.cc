// The ftrace direct-call samples against every tracer and against kprobes
// (ftracetest direct/ftrace-direct.tc, direct/kprobe-direct.tc), and the
// latency tracers with preemptirq_delay_test (preemptirq/irqsoff_tracer.tc).
// Each order of attaching and detaching is one the kernel must survive:
// a trampoline left behind or a direct call lost shows as a crash, a hang
// or a missing "my_direct_func: waking up" line.
#include <regex>

#include <fmt/format.h>

#include "framework/tracefs/text.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

class ModulesDirect : public ModuleTest {
 public:
  ModulesDirect() : ModuleTest({features::ftrace_direct_module}) {}

 protected:
  std::string trace() {
    auto t = top().read_trace();
    EXPECT_OK(t);
    return t ? *t : "";
  }
  // The four orders of direct.tc's test_tracer / test_kprobes.
  void four_orders(const std::function<void()>& on, const std::function<void()>& off) {
    on(), load("ftrace-direct"), unload("ftrace-direct"), off();
    on(), load("ftrace-direct"), off(), unload("ftrace-direct");
    load("ftrace-direct"), on(), off(), unload("ftrace-direct");
    load("ftrace-direct"), on(), unload("ftrace-direct"), off();
  }
  void expect_direct_prints() {
    ASSERT_OK(top().clear_trace());
    load("ftrace-direct");
    sh("sleep 1");
    EXPECT_THAT(trace(), HasSubstr("my_direct_func: waking up")) << "the direct call did not run";
    unload("ftrace-direct");
  }
};

TEST_F(ModulesDirect, DirectCallSurvivesEveryTracerInEveryOrder) {
  TRACEBED_COVERS("ftracetest: direct/ftrace-direct.tc");
  const Instance& t = top();
  expect_direct_prints();
  // The tracers that use function tracing share wake_up_process's call
  // site with the direct call, which is where the two must get along; the
  // filter keeps them off the other ~40 000 sites, each of whose patching
  // and unpatching takes seconds under TCG (this test's 8 rounds per
  // tracer took 5.6 minutes without it).
  ASSERT_OK(t.set_ftrace_filter(traceable({"wake_up_process", "try_to_wake_up"})));
  auto tracers = t.available_tracers();
  ASSERT_OK(tracers);
  for (bool too : {false, true}) {
    if (too) load("ftrace-direct-too");
    for (const std::string& tracer : *tracers) {
      if (tracer == "nop") continue;
      SCOPED_TRACE(fmt::format("tracer {}{}", tracer, too ? " with ftrace-direct-too loaded" : ""));
      four_orders([&] { EXPECT_OK(t.set_tracer(tracer)); }, [&] { EXPECT_OK(t.set_tracer("nop")); });
      if (HasFatalFailure()) return;
    }
  }
  unload("ftrace-direct-too");
  expect_direct_prints();  // and the guest still works
}

TEST_F(ModulesDirect, DirectCallAndKprobeOnTheSameFunctionBothRun) {
  TRACEBED_COVERS("ftracetest: direct/kprobe-direct.tc");
  TRACEBED_REQUIRE(features::kprobes);
  const Instance& t = top();
  expect_direct_prints();
  ASSERT_OK(t.files().write("kprobe_events", "p:kwake wake_up_process task=$arg1"));
  auto on = [&] {
    ASSERT_OK(t.clear_trace());
    ASSERT_OK(t.files().write("events/kprobes/kwake/enable", "1"));
    sh("sleep 1");
    EXPECT_THAT(trace(), HasSubstr("kwake:"));
  };
  auto off = [&] { EXPECT_OK(t.files().write("events/kprobes/kwake/enable", "0")); };
  auto start_direct = [&] {
    ASSERT_OK(t.clear_trace());
    load("ftrace-direct");
    sh("sleep 1");
    EXPECT_THAT(trace(), HasSubstr("my_direct_func: waking up"));
  };
  for (bool too : {false, true}) {
    SCOPED_TRACE(too ? "with ftrace-direct-too loaded" : "alone");
    if (too) load("ftrace-direct-too");
    on(), start_direct(), unload("ftrace-direct"), off();
    on(), start_direct(), off(), unload("ftrace-direct");
    start_direct(), on(), off(), unload("ftrace-direct");
    start_direct(), on(), unload("ftrace-direct"), off();
  }
  unload("ftrace-direct-too");
  ASSERT_OK(t.files().write("kprobe_events", ""));
}

class ModulesLatency : public ModuleTest {
 public:
  ModulesLatency() : ModuleTest({features::preemptirq_delay_module}) {}

 protected:
  // Three sections of `delay_us` under `tracer`; the max trace must be the
  // tracer's and show a latency of at least the delay.
  void sections(const std::string& tracer, const std::string& mode, uint64_t delay_us) {
    const Instance& t = top();
    // Only sections of half the delay or more count. Without a threshold
    // a section is dropped when another CPU set a new max while it ran
    // (trace_irqsoff.c's critical_sequence): with the max at 0, under TCG
    // on a loaded host, the other vCPU's interrupts (8 ms there) did so
    // during each of three 300 ms sections, and the max stayed theirs.
    ASSERT_OK(t.files().write("tracing_thresh", std::to_string(delay_us / 2)));
    ASSERT_OK(t.set_tracer(tracer));
    ASSERT_OK(t.files().write("tracing_max_latency", "0"));
    for (int i = 0; i < 3; ++i) {
      load("preemptirq_delay_test", fmt::format("test_mode={} delay={}", mode, delay_us));
      unload("preemptirq_delay_test");
    }
    auto trace = t.read_trace();
    ASSERT_OK(trace);
    EXPECT_THAT(*trace, HasSubstr("tracer: " + tracer));
    std::smatch m;
    ASSERT_TRUE(std::regex_search(*trace, m, std::regex(R"(latency: (\d+) us)"))) << *trace;
    EXPECT_GE(std::stoull(m[1]), delay_us) << *trace;
    EXPECT_TRUE(std::regex_search(*trace, std::regex(R"(\d+us : <stack trace>)"))) << *trace;
    auto max = t.files().read("tracing_max_latency");
    ASSERT_OK(max);
    EXPECT_EQ(std::stoull(std::string(tracefs::trim(*max))), std::stoull(m[1]));
    ASSERT_OK(t.set_tracer("nop"));
  }
};

TEST_F(ModulesLatency, PreemptoffAndIrqsoffSeeTheDelayAsked) {
  TRACEBED_COVERS("ftracetest: preemptirq/irqsoff_tracer.tc");
  TRACEBED_REQUIRE(Feature::tracer("preemptoff"));
  TRACEBED_REQUIRE(Feature::tracer("irqsoff"));
  sections("preemptoff", "preempt", 500000);
  sections("irqsoff", "irq", 500000);
}

// Shorter and longer sections: the latency follows the delay asked.
TEST_F(ModulesLatency, IrqsoffLatencyFollowsTheDelay) {
  TRACEBED_REQUIRE(Feature::tracer("irqsoff"));
  for (uint64_t delay : {20000u, 100000u, 300000u}) {
    SCOPED_TRACE(fmt::format("delay {} us", delay));
    sections("irqsoff", "irq", delay);
  }
}

}  // namespace
}  // namespace tracebed::suites
