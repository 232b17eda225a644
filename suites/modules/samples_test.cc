// The kernel's sample modules (samples/trace_events, trace_printk, ftrace,
// kernel/trace/preemptirq_delay_test.c) as ftracetest's module cases load
// them, each asserting what the case asserts and, where the sample's work
// can be counted, the count.
#include <cerrno>
#include <regex>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

class ModulesSamples : public ModuleTest {
 public:
  ModulesSamples() : ModuleTest({}) {}

 protected:
  std::string read(const Instance& in, std::string_view rel) {
    auto v = in.files().read(rel);
    SCOPED_TRACE(std::string(rel));
    EXPECT_OK(v);
    return v ? std::string(tracefs::trim(*v)) : "";
  }
  size_t count(const std::string& text, std::string_view needle) {
    size_t n = 0;
    for (size_t p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
    return n;
  }
};

// ftracetest event/event-mod.tc: ":mod:" in set_event with the module
// loaded and before it loads, by system, by event and by both.
TEST_F(ModulesSamples, SetEventModEnablesAModulesEventsLoadedOrNot) {
  TRACEBED_COVERS("ftracetest: event/event-mod.tc");
  TRACEBED_REQUIRE(features::trace_events_sample_module);
  TRACEBED_REQUIRE(features::module_events);
  const Instance& in = inst();
  auto set_event = [&] { return read(in, "set_event"); };
  auto all_enabled = [&] {
    std::string text = set_event();  // the lines are views into it
    auto lines = tracefs::split_lines(text);
    for (std::string_view e : {"sample-trace:foo_bar", "sample-trace:foo_bar_with_cond", "sample-trace:foo_bar_with_fn"})
      EXPECT_THAT(lines, Contains(e));
    EXPECT_EQ(read(in, "events/sample-trace/enable"), "1");
  };
  load("trace-events-sample");
  ASSERT_OK(in.files().write("set_event", ":mod:trace-events-sample"));
  all_enabled();
  ASSERT_OK(in.enable_all_events(false));
  EXPECT_EQ(read(in, "events/sample-trace/enable"), "0");
  EXPECT_EQ(set_event(), "");
  ASSERT_OK(in.enable_all_events(true));
  EXPECT_EQ(read(in, "events/sample-trace/enable"), "1");
  ASSERT_OK(in.files().append("set_event", "!:mod:trace-events-sample"));
  EXPECT_EQ(read(in, "events/enable"), "X");
  EXPECT_EQ(read(in, "events/sample-trace/enable"), "0");
  ASSERT_OK(in.enable_all_events(false));
  ASSERT_OK(in.files().write("set_event", "sample-trace:mod:trace-events-sample"));
  all_enabled();
  ASSERT_OK(in.enable_all_events(false));
  ASSERT_OK(in.files().write("set_event", "foo_bar:mod:trace-events-sample"));
  EXPECT_EQ(set_event(), "sample-trace:foo_bar");
  ASSERT_OK(in.files().append("set_event", "sample-trace:foo_bar_with_cond:mod:trace-events-sample"));
  EXPECT_EQ(tracefs::split_lines(set_event()).size(), 2u);
  ASSERT_OK(in.files().write("set_event", ""));
  unload("trace-events-sample");

  // Cached for a module that is not loaded, '-' read as '_'.
  ASSERT_OK(in.files().write("set_event", ":mod:trace-events-sample"));
  EXPECT_THAT(set_event(), HasSubstr("*:*:mod:trace_events_sample"));
  load("trace-events-sample");
  all_enabled();
  ASSERT_OK(in.files().write("set_event", ""));
  unload("trace-events-sample");
  ASSERT_OK(in.files().write("set_event", "foo_bar:mod:trace-events-sample"));
  ASSERT_OK(in.files().append("set_event", "sample-trace:foo_bar_with_cond:mod:trace-events-sample"));
  EXPECT_THAT(set_event(), HasSubstr("foo_bar:mod:trace_events_sample"));
  EXPECT_THAT(set_event(), HasSubstr("sample-trace:foo_bar_with_cond:mod:trace_events_sample"));
  load("trace-events-sample");
  EXPECT_THAT(set_event(), Not(HasSubstr(":mod:")));
  EXPECT_EQ(tracefs::split_lines(set_event()).size(), 2u);
  EXPECT_EQ(read(in, "events/sample-trace/enable"), "X");
  EXPECT_EQ(read(in, "events/sample-trace/foo_bar/enable"), "1");
  EXPECT_EQ(read(in, "events/sample-trace/foo_bar_with_cond/enable"), "1");
}

// ftracetest event/trace_printk.tc: the sample's trace_printk, trace_puts
// and their bprintk/bputs forms, from the task and from an irq_work, and
// their formats in printk_formats.
TEST_F(ModulesSamples, TracePrintkSamplePrintsFromTaskAndIrq) {
  TRACEBED_COVERS("ftracetest: event/trace_printk.tc");
  TRACEBED_REQUIRE(features::trace_printk_sample_module);
  const Instance& t = top();
  load("trace-printk");
  sh("sleep 1");  // the irq_work
  std::string trace = read(t, "trace");
  for (const char* re : {": This .* trace_bputs", ": This .* trace_puts", ": This .* trace_bprintk",
                         ": This .* trace_printk", ": \\(irq\\) .* trace_bputs", ": \\(irq\\) .* trace_puts",
                         ": \\(irq\\) .* trace_bprintk", ": \\(irq\\) .* trace_printk"})
    EXPECT_TRUE(std::regex_search(trace, std::regex(re))) << re << " not in trace:\n" << trace;
  std::string formats = top_file("printk_formats");
  EXPECT_THAT(formats, HasSubstr("This is a %s that will use trace_bprintk"));
  EXPECT_THAT(formats, HasSubstr("(irq) This is a static string that will use trace_bputs"));
}

// The sample trace array: a module's own instance, which the user cannot
// remove while the module holds it, printing a count once a second into
// it, gone when the module unloads.
TEST_F(ModulesSamples, SampleTraceArrayInstanceCountsAndGoesWithTheModule) {
  TRACEBED_REQUIRE(features::trace_array_sample_module);
  load("sample-trace-array");
  sh("sleep 3");
  auto dir = fs().root() + "/instances/sample-instance";
  ASSERT_TRUE(fs().ops().exists(dir));
  auto rmdir = fs().ops().rmdir(dir);
  ASSERT_OK(rmdir);
  EXPECT_EQ(*rmdir, EBUSY) << "removing the instance a module holds";
  auto trace = fs().ops().read(dir + "/trace");
  ASSERT_OK(trace);
  std::vector<int> printed, events;
  std::regex p(R"(trace_array_printk: count=(\d+))"), e(R"(sample_event: count value=(\d+))");
  for (auto line : tracefs::split_lines(*trace)) {
    std::string l(line);
    std::smatch m;
    if (std::regex_search(l, m, p)) printed.push_back(std::stoi(m[1]));
    if (std::regex_search(l, m, e)) events.push_back(std::stoi(m[1]));
  }
  ASSERT_GE(printed.size(), 2u) << *trace;
  for (size_t i = 0; i < printed.size(); ++i) EXPECT_EQ(printed[i], static_cast<int>(i)) << *trace;
  // Its sample_event records nothing there: the instance was made with the
  // sched, timer and kprobes systems only, so the module's own event is
  // not in it and trace_array_set_clr_event() finds nothing to enable.
  EXPECT_THAT(events, IsEmpty()) << *trace;
  EXPECT_TRUE(fs().ops().exists(dir + "/events/sched"));
  EXPECT_FALSE(fs().ops().exists(dir + "/events/sample-subsystem"));
  unload("sample-trace-array");
  EXPECT_FALSE(fs().ops().exists(dir)) << "the instance outlived its module";
}

// The kprobes sample registers a kprobe on kernel_clone from module code:
// debugfs kprobes/list shows it while the module is loaded, not after.
TEST_F(ModulesSamples, KprobeSampleIsListedOnlyWhileLoaded) {
  TRACEBED_REQUIRE(Feature::module("kprobe_example"));
  auto list = [&] { return sh("cat /sys/kernel/debug/kprobes/list"); };
  EXPECT_THAT(list(), Not(HasSubstr("kernel_clone")));
  load("kprobe_example");
  EXPECT_THAT(list(), HasSubstr("kernel_clone"));
  unload("kprobe_example");
  EXPECT_THAT(list(), Not(HasSubstr("kernel_clone")));
}

// The fprobe sample attaches to the symbol it is given through ftrace:
// enabled_functions lists it while loaded, not after.
TEST_F(ModulesSamples, FprobeSampleEnablesItsFunctionOnlyWhileLoaded) {
  TRACEBED_REQUIRE(Feature::module("fprobe_example"));
  auto listed = [&] { return top_file("enabled_functions").find("vfs_fsync_range") != std::string::npos; };
  EXPECT_FALSE(listed());
  load("fprobe_example", "symbol=vfs_fsync_range");
  EXPECT_TRUE(listed()) << top_file("enabled_functions");
  unload("fprobe_example");
  EXPECT_FALSE(listed()) << top_file("enabled_functions");
}

// kernel/trace/synth_event_gen_test.c, the in-kernel synthetic event API
// (synth_event_gen_cmd_start, synth_event_create, and the three ways of
// tracing one: from an array, field after field between
// synth_event_trace_start and _end, which nest in the ring buffer with
// ring_buffer_nest_start, and all at once): its init makes three events,
// enables them at the top level and traces six records, whose values are
// in its source. Each record decodes to them, in that order, and the
// events go with the module.
TEST_F(ModulesSamples, SynthEventGenTestTracesTheValuesItsInitWrote) {
  TRACEBED_REQUIRE(Feature::module("synth_event_gen_test"));
  load("synth_event_gen_test");
  struct Expected {
    std::string event;
    int64_t next_pid;
    std::string next_comm, my_string;
    int64_t my_int;
    std::string dyn1 = "", dyn2 = "";
  };
  // In the order its init runs them: test_gen_synth_cmd,
  // test_empty_synth_event, test_create_synth_event (each from an array),
  // test_add_next_synth_val, test_add_synth_val, test_trace_synth_event.
  const std::vector<Expected> want = {
      {"gen_synth_test", 777, "hula hoops", "thneed", 598},
      {"empty_synth_test", 777, "tiddlywinks", "thneed_2.0", 399},
      {"create_synth_test", 777, "tiddlywinks", "thneed", 398, "xrayspecs", "kerplunk"},
      {"gen_synth_test", 777, "slinky", "thneed_2.01", 395},
      {"gen_synth_test", 777, "silly putty", "thneed_9", 3999},
      {"create_synth_test", 444, "clackers", "Thneed", 999, "viewmaster", "yoyos"},
  };
  const Instance& top_level = top();
  const std::vector<DecodedEvent> got =
      decoded(top_level, {top_level.event("synthetic", "gen_synth_test"), top_level.event("synthetic", "empty_synth_test"),
                          top_level.event("synthetic", "create_synth_test")});
  ASSERT_EQ(got.size(), want.size()) << ::testing::PrintToString(got);
  for (size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(::testing::Message() << "record " << i << ": " << ::testing::PrintToString(got[i]));
    const Expected& w = want[i];
    EXPECT_EQ(got[i].name, w.event);
    EXPECT_EQ(int_field(got[i], "next_pid_field"), w.next_pid);
    EXPECT_EQ(str_field(got[i], "next_comm_field"), w.next_comm);
    EXPECT_EQ(int_field(got[i], "ts_ns"), 1000000);
    EXPECT_EQ(int_field(got[i], "ts_ms"), 1000);
    EXPECT_EQ(int_field(got[i], "cpu"), got[i].cpu) << "the CPU it was traced on";
    EXPECT_EQ(str_field(got[i], "my_string_field"), w.my_string);
    EXPECT_EQ(int_field(got[i], "my_int_field"), w.my_int);
    if (!w.dyn1.empty()) {
      EXPECT_EQ(str_field(got[i], "dynstring_field_1"), w.dyn1);
      EXPECT_EQ(str_field(got[i], "dynstring_field_2"), w.dyn2);
    }
  }
  unload("synth_event_gen_test");
  for (const char* e : {"gen_synth_test", "empty_synth_test", "create_synth_test"})
    EXPECT_FALSE(fs().ops().exists(fs().root() + "/events/synthetic/" + e)) << e << " outlived its module";
}

// kernel/trace/kprobe_event_gen_test.c, the in-kernel kprobe event API
// (kprobe_event_gen_cmd_start, kprobe_event_add_fields,
// kretprobe_event_gen_cmd_start): its init defines a kprobe and a
// kretprobe on do_sys_open and enables both at the top level. Listed in
// kprobe_events while it is loaded, with the arguments it added, and
// enabled; both go with the module. (They are not counted firing: x86-64
// builds of 7.2 inline do_sys_open into open(2), and the probed copy is
// not the one the syscall runs.)
TEST_F(ModulesSamples, KprobeEventGenTestDefinesItsProbesWhileLoaded) {
  TRACEBED_REQUIRE(Feature::module("kprobe_event_gen_test"));
  load("kprobe_event_gen_test");
  const Instance& top_level = top();
  auto listed = [&] { return read(top_level, "kprobe_events"); };
  EXPECT_THAT(listed(), AllOf(HasSubstr("kprobes/gen_kprobe_test do_sys_open"),
                              HasSubstr("kprobes/gen_kretprobe_test do_sys_open")));
  EXPECT_EQ(read(top_level, "events/kprobes/gen_kprobe_test/enable"), "1");
  EXPECT_EQ(read(top_level, "events/kprobes/gen_kretprobe_test/enable"), "1");
  unload("kprobe_event_gen_test");
  EXPECT_THAT(listed(), Not(HasSubstr("gen_k"))) << "the module's probes outlived it";
}

}  // namespace
}  // namespace tracebed::suites
