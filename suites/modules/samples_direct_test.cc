// The ftrace direct-call samples against every tracer and against kprobes
// (ftracetest direct/ftrace-direct.tc, direct/kprobe-direct.tc), and the
// latency tracers with preemptirq_delay_test (preemptirq/irqsoff_tracer.tc).
// Each order of attaching and detaching is one the kernel must survive:
// a trampoline left behind or a direct call lost shows as a crash, a hang
// or a missing "my_direct_func: waking up" line.
#include <iterator>
#include <regex>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework/tracefs/tracefs_text.h"
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

// With ftrace-direct loaded and the function tracer on the same function,
// wake_up_process has two ftrace users: its call site must go to the ftrace
// trampoline, which runs the tracer and then the direct call
// (ftrace_get_addr_new() takes the direct address only while the direct
// call is the site's one user). Both record every call of the window, so
// their counts agree, but for a call cut by tracing_on at either edge.
TEST_F(ModulesDirect, DirectCallAndFunctionTracerOnTheSameFunctionBothRecord) {
  TRACEBED_REQUIRE(features::function_tracer);
  const Instance& t = top();
  ASSERT_OK(t.set_ftrace_filter(traceable({"wake_up_process"})));
  load("ftrace-direct");
  ASSERT_OK(t.set_tracer("function"));
  ASSERT_OK(t.set_tracing_on(false));
  ASSERT_OK(t.clear_trace());
  ASSERT_OK(t.set_tracing_on(true));
  // Each sleep's timer wakes it with wake_up_process (hrtimer_wakeup).
  sh("i=0; while [ $i -lt 100 ]; do sleep 0.01; i=$((i+1)); done");
  ASSERT_OK(t.set_tracing_on(false));
  const std::string text = trace();
  ASSERT_OK(t.set_tracer("nop"));
  unload("ftrace-direct");
  auto count = [&](const std::regex& re) {
    return std::distance(std::sregex_iterator(text.begin(), text.end(), re), std::sregex_iterator());
  };
  const auto traced = count(std::regex(R"( wake_up_process <-)"));
  const auto direct = count(std::regex(R"(my_direct_func: waking up )"));
  EXPECT_GE(direct, 100) << "fewer direct calls than the loop's 100 sleeps";
  EXPECT_NEAR(traced, direct, 2) << "function tracer records vs direct calls of wake_up_process";
}

// ftrace-direct-modify (schedule) and ftrace-direct-multi-modify
// (wake_up_process and schedule) move their direct call between two
// trampolines every 2 s with modify_ftrace_direct(), which takes
// direct_mutex each time: every move must show in the trace, and the
// unload's unregister_ftrace_direct() must find the mutex free again.
TEST_F(ModulesDirect, ModifiedDirectCallAlternatesAndUnloads) {
  for (const char* module : {"ftrace-direct-modify", "ftrace-direct-multi-modify"}) {
    SCOPED_TRACE(module);
    TRACEBED_REQUIRE(Feature::module(module));
    ASSERT_OK(top().clear_trace());
    load(module);
    // The runs of "my direct funcN" lines, in trace order: 1, 2, 1, 2 is
    // three moves (about 6 s; up to 40 s allowed for a loaded host).
    std::vector<int> runs;
    for (int waited = 0; waited < 40 && runs.size() < 4; waited += 2) {
      sh("sleep 2");
      runs.clear();
      const std::string text = trace();
      static const std::regex kLine(R"(my direct func([12]))");
      for (auto it = std::sregex_iterator(text.begin(), text.end(), kLine); it != std::sregex_iterator(); ++it) {
        int f = (*it)[1].str() == "1" ? 1 : 2;
        if (runs.empty() || runs.back() != f) runs.push_back(f);
      }
    }
    unload(module);
    EXPECT_FALSE(loaded(module));
    ASSERT_GE(runs.size(), 4u) << "the direct call's trampolines in trace order: " << fmt::format("{}", fmt::join(runs, ", "));
    EXPECT_EQ(runs[0], 1) << "the first trampoline is my_tramp1 (the module's my_tramp)";
  }
}

class ModulesLatency : public ModuleTest {
 public:
  ModulesLatency() : ModuleTest({features::preemptirq_delay_module}) {}

 protected:
  // Three sections of `delay_us` under `tracer`; the max trace must be the
  // tracer's and show a latency of at least the delay.
  void sections(const std::string& tracer, const std::string& mode, uint64_t delay_us) {
    const Instance& t = top();
    // Only sections of most of the delay count. Without a threshold
    // a section is dropped when another CPU set a new max while it ran
    // (trace_irqsoff.c's critical_sequence): with the max at 0, under TCG
    // on a loaded host, the other vCPU's interrupts (8 ms there) did so
    // during each of three 300 ms sections, and the max stayed theirs.
    // And with a threshold every section over it replaces the max, not
    // only a longer one (trace_irqsoff.c report_latency): three quarters
    // of the delay keeps the other vCPU's 10 ms sections out, and tracing
    // stops as soon as the last section is done (the module's init waits
    // for it), so that none comes between reading the trace and the max.
    ASSERT_OK(t.files().write("tracing_thresh", std::to_string(delay_us * 3 / 4)));
    ASSERT_OK(t.set_tracer(tracer));
    ASSERT_OK(t.files().write("tracing_max_latency", "0"));
    for (int i = 0; i < 3; ++i) {
      load("preemptirq_delay_test", fmt::format("test_mode={} delay={}", mode, delay_us));
      if (i == 2) ASSERT_OK(t.set_tracing_on(false));
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
    ASSERT_OK(t.set_tracing_on(true));
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
