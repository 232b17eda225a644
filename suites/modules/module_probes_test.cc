// Probes and filters on a module's code and tracepoints, across its unload
// and reload, as Documentation/trace/kprobetrace.rst, fprobetrace.rst and
// ftrace.rst (":mod:" filters) describe and ftracetest's module cases
// check. Each test ends with the module gone; the next one loading it
// again and passing is the check that the guest stayed usable.
#include <chrono>
#include <thread>
#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/known_kernel_bug.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

constexpr std::string_view kModule = "tracebed_events";

class ModulesProbes : public ModuleTest {
 public:
  ModulesProbes() : ModuleTest({features::tracebed_events_module}) {}

 protected:
  // `n` flags lines (seq from `first`); returns them as (seq, flags, state).
  std::vector<std::tuple<int64_t, int64_t, int64_t>> emit_flags(int n, int first = 0) {
    std::vector<std::tuple<int64_t, int64_t, int64_t>> out;
    std::string lines;
    for (int i = first; i < first + n; ++i) {
      int64_t flags = (int64_t{i} * 0x9e3779b9) & 0xffffffffff, state = i % 5 - 2;
      out.emplace_back(i, flags, state);
      lines += fmt::format("flags {} {:#x} {}\n", i, flags, state);
    }
    EXPECT_EQ(emit(lines), 0);
    return out;
  }
  size_t lines_with(const std::vector<std::string>& lines, std::string_view needle) {
    return std::count_if(lines.begin(), lines.end(), [&](const std::string& l) { return l.find(needle) != l.npos; });
  }
  bool has_line(std::string_view rel, std::string_view needle) {
    std::string text = top_file(rel);  // the lines are views into it
    for (auto l : tracefs::split_lines(text))
      if (l.find(needle) != std::string_view::npos) return true;
    return false;
  }
};

// A kprobe on a module function sees the arguments the module was called with.
TEST_F(ModulesProbes, KprobeOnModuleFunctionFetchesItsArguments) {
  TRACEBED_REQUIRE(features::kprobes);
  TRACEBED_REQUIRE(features::fetcharg_argn);
  load(kModule);
  auto ev = create_enabled(KprobeDef::at(unique("emit_flags"), "tracebed_emit_flags")
                               .module(kModule)
                               .arg(FetchArg::arg(1).name("seq").type(FetchType::u32()))
                               .arg(FetchArg::arg(2).name("flags").type(FetchType::u64()))
                               .arg(FetchArg::arg(3).name("state").type(FetchType::s32())));
  ASSERT_OK(ev);
  auto want = emit_flags(150);
  std::vector<std::tuple<int64_t, int64_t, int64_t>> got;
  for (const auto& e : decoded(*ev)) got.emplace_back(int_field(e, "seq"), int_field(e, "flags"), int_field(e, "state"));
  EXPECT_EQ(got, want);
}

// ftracetest kprobe/kprobe_module.tc with tracebed_events: probes on a
// module function, named and not, outlive its unload; one can be defined
// while it is gone, and an enabled one fires again once it is back.
TEST_F(ModulesProbes, KprobeOnModuleOutlivesUnloadAndFiresAfterReload) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_module.tc");
  TRACEBED_REQUIRE(features::kprobes);
  load(kModule);
  const Instance& t = top();
  std::string place = fmt::format("{}:tracebed_emit_flags", kModule);
  ASSERT_OK(t.files().write("kprobe_events", "p " + place));
  EXPECT_TRUE(t.files().has("events/kprobes/p_tracebed_events_tracebed_emit_flags_0"));
  ASSERT_OK(t.files().append("kprobe_events", "p:event1 " + place));
  EXPECT_TRUE(t.files().has("events/kprobes/event1"));
  ASSERT_OK(t.files().append("kprobe_events", "p:kprobes1/event1 " + place));
  EXPECT_TRUE(t.files().has("events/kprobes1/event1"));
  unload(kModule);
  EXPECT_TRUE(t.files().has("events/kprobes1/event1")) << "the event went with the module";
  // A probe on a module that is not loaded is accepted.
  EXPECT_OK(t.files().append("kprobe_events", "p:event2 " + place));
  ASSERT_OK(t.files().write("events/kprobes1/event1/enable", "1"));
  load(kModule);
  ASSERT_OK(t.clear_trace());
  emit_flags(40);
  EXPECT_EQ(lines_with(trace_lines(t), "event1:"), 40u) << "hits of kprobes1/event1 after the reload";
  unload(kModule);
  // The event is not locked by the unload: it can be disabled and removed.
  EXPECT_OK(t.files().write("events/kprobes1/event1/enable", "0"));
  EXPECT_OK(t.files().append("kprobe_events", "-:kprobes1/event1"));
  EXPECT_FALSE(t.files().has("events/kprobes1/event1"));
}

// ftracetest dynevent/add_remove_tprobe_module.tc with tracebed_events:
// tprobes on a module's tracepoints, defined with it loaded and again with
// it gone, fire once per call of their own tracepoint (trace_fprobe.c
// __find_tracepoint_module_cb finds it by name among the module's).
TEST_F(ModulesProbes, TprobeOnModuleTracepointDefinedBeforeLoadFires) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_tprobe_module.tc");
  TRACEBED_REQUIRE(features::tprobes);
  load(kModule);
  const Instance& t = top();
  ASSERT_OK(t.files().append("dynamic_events", "t:myevent1 tb_flags"));
  ASSERT_OK(t.files().append("dynamic_events", "t:myevent2 tb_ints"));
  EXPECT_TRUE(has_line("dynamic_events", "myevent1"));
  EXPECT_TRUE(t.files().has("events/tracepoints/myevent2"));
  {
    SCOPED_TRACE("defined with the module loaded");
    ASSERT_OK(t.files().write("events/tracepoints/enable", "1"));
    ASSERT_OK(t.clear_trace());
    emit_flags(30);
    EXPECT_EQ(emit("ints 1 1 1 1 1 1 1 1 1\nints 2 2 2 2 2 2 2 2 2\n"), 0);
    ASSERT_OK(t.files().write("events/tracepoints/enable", "0"));
    auto lines = trace_lines(t);
    EXPECT_EQ(lines_with(lines, "myevent1:"), 30u);
    EXPECT_EQ(lines_with(lines, "myevent2:"), 2u);
  }
  ASSERT_OK(t.files().append("dynamic_events", "-:myevent2"));
  EXPECT_TRUE(has_line("dynamic_events", "myevent1"));
  EXPECT_FALSE(has_line("dynamic_events", "myevent2"));
  ASSERT_OK(t.files().write("dynamic_events", ""));
  unload(kModule);
  ASSERT_OK(t.files().append("dynamic_events", "t:myevent1 tb_flags"));
  ASSERT_OK(t.files().append("dynamic_events", "t:myevent2 tb_ints"));
  EXPECT_TRUE(t.files().has("events/tracepoints/myevent1"));
  EXPECT_TRUE(t.files().has("events/tracepoints/myevent2"));
  ASSERT_OK(t.files().write("events/tracepoints/enable", "1"));
  load(kModule);
  ASSERT_OK(t.clear_trace());
  emit_flags(30);
  EXPECT_EQ(emit("ints 1 1 1 1 1 1 1 1 1\nints 2 2 2 2 2 2 2 2 2\n"), 0);
  {
    SCOPED_TRACE("defined before the module loaded");
    auto lines = trace_lines(t);
    EXPECT_EQ(lines_with(lines, "myevent1:"), 30u);
    EXPECT_EQ(lines_with(lines, "myevent2:"), 2u);
  }
  unload(kModule);
  EXPECT_OK(t.files().write("events/tracepoints/enable", "0"));
  EXPECT_OK(t.files().write("dynamic_events", ""));
}

// A tprobe on a tracepoint that no loaded module has waits for the module
// that has it, though another module's tracepoints are there: the sample
// module's thread hits its own every second (trace_fprobe.c
// __find_tracepoint_module_cb takes a tracepoint by its name only; an
// `||` for its `&&` would bind the tprobe to the first module tracepoint
// it meets). Nothing is recorded until tracebed_events loads, then each of
// its 30 flags lines once.
TEST_F(ModulesProbes, TprobeWaitsForItsModuleBesideAnotherModulesTracepoints) {
  TRACEBED_REQUIRE(features::tprobes);
  TRACEBED_REQUIRE(features::trace_events_sample_module);
  const Instance& t = top();
  load("trace-events-sample");
  ASSERT_OK(t.files().append("dynamic_events", "t:waiting tb_flags"));
  ASSERT_OK(t.files().write("events/tracepoints/waiting/enable", "1"));
  ASSERT_OK(t.clear_trace());
  // Two of the sample thread's rounds of its tracepoints.
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(lines_with(trace_lines(t), "waiting:"), 0u) << "the tprobe fired before its module was loaded";
  load(kModule);
  emit_flags(30);
  EXPECT_EQ(lines_with(trace_lines(t), "waiting:"), 30u) << "hits of the tprobe on tb_flags once its module loaded";
  unload(kModule);
  unload("trace-events-sample");
  EXPECT_OK(t.files().write("events/tracepoints/waiting/enable", "0"));
  EXPECT_OK(t.files().write("dynamic_events", ""));
}

// ftracetest dynevent/add_remove_fprobe_module.tc: an fprobe on a module's
// functions puts them in enabled_functions and takes them out when the
// module goes; it does not come back by itself, and an fprobe on a kernel
// function beside it is left alone.
TEST_F(ModulesProbes, FprobeOnModuleFunctionsLeavesEnabledFunctionsOnUnload) {
  TRACEBED_COVERS("ftracetest: dynevent/add_remove_fprobe_module.tc");
  TRACEBED_REQUIRE(features::fprobes);
  TRACEBED_REQUIRE(features::trace_events_sample_module);
  const Instance& t = top();
  load("trace-events-sample");
  ASSERT_OK(t.enable_all_events(false));
  ASSERT_OK(t.files().write("dynamic_events", ""));
  size_t base = tracefs::split_lines(top_file("enabled_functions")).size();
  auto funcs = [&] { return tracefs::split_lines(top_file("enabled_functions")).size() - base; };
  ASSERT_OK(t.files().append("dynamic_events", "f:test1 foo_bar*"));
  ASSERT_OK(t.files().write("events/fprobes/test1/enable", "1"));
  EXPECT_NE(funcs(), 0u);
  unload("trace-events-sample");
  EXPECT_EQ(funcs(), 0u) << "enabled_functions kept the unloaded module's functions";
  load("trace-events-sample");
  (void)t.files().try_write("events/fprobes/test1/enable", "1");
  EXPECT_EQ(funcs(), 0u);
  ASSERT_OK(t.files().append("dynamic_events", "f:test2 vfs_read"));
  ASSERT_OK(t.files().write("events/fprobes/test2/enable", "1"));
  size_t other = funcs();
  EXPECT_NE(other, 0u);
  ASSERT_OK(t.files().write("events/fprobes/test1/enable", "0"));
  ASSERT_OK(t.files().append("dynamic_events", "-:fprobes/test1"));
  EXPECT_EQ(funcs(), other);
  ASSERT_OK(t.files().write("events/fprobes/enable", "0"));
  ASSERT_OK(t.files().write("dynamic_events", ""));
  EXPECT_EQ(funcs(), 0u);
  unload("trace-events-sample");

  load("trace-events-sample");
  ASSERT_OK(t.files().append("dynamic_events", "f:test1 foo_bar*"));
  ASSERT_OK(t.files().write("events/fprobes/test1/enable", "1"));
  ASSERT_OK(t.files().append("dynamic_events", "f:test2 vfs_read"));
  ASSERT_OK(t.files().write("events/fprobes/test2/enable", "1"));
  size_t both = funcs();
  EXPECT_NE(both, 0u);
  unload("trace-events-sample");
  EXPECT_NE(funcs(), 0u);
  EXPECT_NE(funcs(), both) << "the module's functions stayed in enabled_functions";
  ASSERT_OK(t.files().write("events/fprobes/test2/enable", "0"));
  ASSERT_OK(t.files().append("dynamic_events", "-:fprobes/test2"));
  EXPECT_EQ(funcs(), 0u);
  ASSERT_OK(t.files().write("events/fprobes/enable", "0"));
  ASSERT_OK(t.files().write("dynamic_events", ""));
}

// ftracetest ftrace/func_mod_trace.tc with tracebed_events: a ":mod:"
// filter for a module that is not there is kept, is resolved to the
// module's functions when it loads, and is gone with it.
TEST_F(ModulesProbes, FunctionFilterModResolvesOnLoadAndEmptiesOnUnload) {
  TRACEBED_COVERS("ftracetest: ftrace/func_mod_trace.tc");
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  TRACEBED_REQUIRE(features::function_tracer);
  const Instance& t = top();
  ASSERT_OK(t.files().write("set_ftrace_filter", "non_exist_func:mod:non_exist_module"));
  EXPECT_TRUE(has_line("set_ftrace_filter", "non_exist_func"));
  ASSERT_OK(t.files().write("set_ftrace_filter", fmt::format("*:mod:{}", kModule)));
  load(kModule);
  EXPECT_TRUE(has_line("set_ftrace_filter", "tracebed_emit_flags")) << top_file("set_ftrace_filter");
  ASSERT_OK(t.set_tracer("function"));
  emit_flags(25);
  ASSERT_OK(t.set_tracing_on(false));
  auto lines = trace_lines(t);
  EXPECT_EQ(lines_with(lines, ": tracebed_emit_flags"), 25u) << "function hits of tracebed_emit_flags";
  ASSERT_OK(t.set_tracer("nop"));
  unload(kModule);
  EXPECT_THAT(tracefs::split_lines(top_file("set_ftrace_filter")), IsEmpty());
}

// A ":mod:" filter whose module is loaded takes its functions at once and
// is not kept for later (ftrace.c ftrace_set_regex caches only a command
// that matched nothing): listed as the function alone, with no ":mod:"
// line; the unload empties the filter and a second load leaves it empty.
TEST_F(ModulesProbes, FunctionFilterModOfALoadedModuleIsNotCached) {
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  TRACEBED_REQUIRE(features::function_tracer);
  const Instance& t = top();
  load(kModule);
  // The module's own name, as the kernel has it ('_' for the file's '-'):
  // cache_mod() only looks up a module of that exact name.
  ASSERT_OK(t.files().write("set_ftrace_filter", fmt::format("tracebed_emit_flags:mod:{}", module_name(kModule))));
  const std::string filter = top_file("set_ftrace_filter");  // the lines are views into it
  std::vector<std::string> listed;
  for (std::string_view l : tracefs::split_lines(filter))
    if (!l.starts_with("#")) listed.emplace_back(l);
  EXPECT_THAT(listed, ElementsAre(HasSubstr("tracebed_emit_flags"))) << "the function, and no cached :mod: line";
  unload(kModule);
  EXPECT_THAT(tracefs::split_lines(top_file("set_ftrace_filter")), IsEmpty());
  load(kModule);
  EXPECT_THAT(tracefs::split_lines(top_file("set_ftrace_filter")), IsEmpty()) << "a matched :mod: came back on load";
  unload(kModule);
}

// set_event "SYSTEM:mod:" before the module loads: listed as the kernel
// keeps it ('-' read as '_'), turned into the module's events when it
// loads. Only the tracebed system: ":mod:" alone would enable the module's
// custom event too, which crashes 7.2 (see the disabled test below).
TEST_F(ModulesProbes, SetEventModBeforeLoadEnablesTheModulesEvents) {
  TRACEBED_REQUIRE(features::module_events);
  ASSERT_OK(inst().add_set_event("tracebed:mod:tracebed-events"));
  auto before = inst().files().read("set_event");
  ASSERT_OK(before);
  EXPECT_THAT(*before, HasSubstr("tracebed:mod:tracebed_events"));
  load(kModule);
  auto after = inst().files().read("set_event");
  ASSERT_OK(after);
  EXPECT_THAT(*after, Not(HasSubstr(":mod:")));
  for (const char* e : {"tb_ints", "tb_arrays", "tb_strings", "tb_masks", "tb_flags"})
    EXPECT_THAT(*after, HasSubstr(fmt::format("tracebed:{}", e)));
  emit_flags(20);
  EXPECT_THAT(decoded({"tracebed", "tb_flags"}), SizeIs(20));
}

// The set_event cache of a module not loaded keeps an entry per name
// (trace_events.c cache_mod), and "!NAME:mod:MODULE" removes that one
// entry (remove_cache_mod): of tb_ints and tb_flags cached, removing
// tb_ints leaves tb_flags listed, and when the module loads only tb_flags
// is enabled.
TEST_F(ModulesProbes, SetEventModCacheRemovesOnlyTheNamedEntry) {
  TRACEBED_REQUIRE(features::module_events);
  ASSERT_OK(inst().add_set_event("tb_ints:mod:tracebed-events"));
  ASSERT_OK(inst().add_set_event("tb_flags:mod:tracebed-events"));
  auto cached = inst().files().read("set_event");
  ASSERT_OK(cached);
  EXPECT_THAT(*cached, AllOf(HasSubstr("tb_ints:mod:tracebed_events"), HasSubstr("tb_flags:mod:tracebed_events")));
  ASSERT_OK(inst().add_set_event("!tb_ints:mod:tracebed-events"));
  auto left = inst().files().read("set_event");
  ASSERT_OK(left);
  EXPECT_THAT(*left, HasSubstr("tb_flags:mod:tracebed_events"));
  EXPECT_THAT(*left, Not(HasSubstr("tb_ints")));
  load(kModule);
  auto after = inst().files().read("set_event");
  ASSERT_OK(after);
  EXPECT_THAT(*after, HasSubstr("tracebed:tb_flags"));
  EXPECT_THAT(*after, Not(HasSubstr("tb_ints")));
  EXPECT_THAT(*after, Not(HasSubstr(":mod:")));
}

// ":mod:" for a module with a TRACE_CUSTOM_EVENT enables the custom event
// in the module's COMING notifier (trace_module_notify), before the
// module's init has looked up its tracepoint
// (trace_custom_event_<name>_update): call->tp still holds the event's
// name, and tracepoint_probe_register() faults on it (7.2.13: "BUG: unable
// to handle page fault" in tracepoint_add_func, modprobe killed).
const testlib::KnownKernelBug kCustomEventBeforeItsTracepoint{
    "set_event's :mod: enables a module's custom event before the module resolved its tracepoint: "
    "tracepoint_add_func faults on the event's name",
    // The faulting instruction's line: not any oops that passes through it.
    {"RIP: 0010:tracepoint_add_func"},
    {7, 4},
    "seen on 7.2.13, not fixed upstream by December 2026; from 7.4 on it fails until a fix is named"};

TEST_F(ModulesProbes, SetEventModForAModuleWithACustomEventDoesNotCrash) {
  TRACEBED_REQUIRE(features::module_events);
  ASSERT_OK(inst().add_set_event(":mod:tracebed_events"));
  // A fault leaves a kernel no later test may trust: end the guest (the
  // next test gets a new one) and judge what the console said. modprobe
  // killed by the oops (status 137) may be back before the oops is read
  // from the console: a few seconds for it.
  auto loaded = try_load(kModule);
  std::string failure = !loaded        ? loaded.error().message
                        : !loaded->ok() ? fmt::format("modprobe {}: status {}: {}", kModule, loaded->shell_status(),
                                                      loaded->out)
                                        : "";
  for (int wait = 0; !failure.empty() && wait < 30; ++wait) {
    if (Status console = testlib::guest().check_console(); !console) {
      failure += "\n" + console.error().message;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!failure.empty()) {
    if (testlib::guest().alive()) testlib::guest().kill();
    TRACEBED_SKIP_IF_KNOWN_BUG(kCustomEventBeforeItsTracepoint, failure);
    FAIL() << failure;
  }
  auto custom = inst().event("custom", "sched_switch").enabled();
  ASSERT_OK(custom);
  EXPECT_TRUE(*custom);
}

// Unloading a module whose events were enabled resets the ring buffers
// (kernel/trace/trace_events.c trace_module_remove_events: records of an
// event whose format is gone could not be read); its events go, and come
// back disabled with the module.
TEST_F(ModulesProbes, UnloadWithEventsEnabledRemovesThemAndResetsTheBuffer) {
  load(kModule);
  ASSERT_OK(inst().event("tracebed", "tb_flags").enable());
  emit_flags(10);
  EXPECT_EQ(lines_with(trace_lines(inst()), "tb_flags:"), 10u);
  unload(kModule);
  EXPECT_FALSE(inst().event("tracebed", "tb_flags").exists());
  EXPECT_EQ(lines_with(trace_lines(inst()), "tb_flags:"), 0u);
  load(kModule);
  auto enabled = inst().event("tracebed", "tb_flags").enabled();
  ASSERT_OK(enabled);
  EXPECT_FALSE(*enabled);
}

// Volume: load, enable, emit, unload, ten times; each round's records are
// all there and only that round's.
TEST_F(ModulesProbes, RepeatedLoadAndUnloadKeepsEveryRoundsEvents) {
  for (int round = 0; round < 10; ++round) {
    SCOPED_TRACE(fmt::format("round {}", round));
    load(kModule);
    ASSERT_OK(inst().set_tracing_on(true));
    ASSERT_OK(inst().event("tracebed", "tb_flags").enable());
    auto want = emit_flags(30 + round, round * 100);
    std::vector<int64_t> seqs;
    for (auto& [seq, f, s] : want) seqs.push_back(seq);
    EXPECT_THAT(int_fields(decoded({"tracebed", "tb_flags"}), "seq"), ElementsAreArray(seqs));
    unload(kModule);
  }
}

}  // namespace
}  // namespace tracebed::suites
