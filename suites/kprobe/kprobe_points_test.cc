// ftracetest kprobe/ cases about where a kprobe may sit: symbol, raw
// address and offsets (probepoint.tc), a symbol kallsyms has twice
// (kprobe_non_uniq_symbol.tc), every byte offset of a function
// (kprobe_insn_boundary.tc), a kprobe beside the function tracer on the
// same function (kprobe_ftrace.tc) and user-memory fetches
// (kprobe_args_user.tc). Addresses come from /proc/kallsyms; firing is
// checked against decoded records.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/raw_definition.h"
#include "framework/testing/tracefs_fixture.h"
#include "framework/tracefs/tracefs_text.h"

namespace tracebed::suites {
namespace {

// kernel/fork.c: every fork goes through it (5.10+).
constexpr const char* kFork = "kernel_clone";

TRACEBED_SUITE_REQUIRES(KprobePoint, features::kprobes);

RawDefinition raw_kprobe(const std::string& event, const std::string& place) {
  return {DynEventKind::kprobe, "p:kprobes/" + event + " " + place, "kprobes", event};
}

// The text symbols around `function` in /proc/kallsyms (__pfx_ padding
// left out, as the .tc does): previous, its own and next address.
struct Around {
  uint64_t prev = 0, self = 0, next = 0;
};
Around around(TracefsTest& t, const std::string& function) {
  std::string out = t.sh("grep -v __pfx_ /proc/kallsyms | grep -A1 -B1 ' " + function + "$' | cut -f1 -d' ' | head -3");
  std::istringstream in(out);
  std::string a, b, c;
  in >> a >> b >> c;
  Around r;
  if (c.empty()) return r;
  r.prev = std::stoull(a, nullptr, 16);
  r.self = std::stoull(b, nullptr, 16);
  r.next = std::stoull(c, nullptr, 16);
  return r;
}

std::string hex(uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "0x%llx", static_cast<unsigned long long>(v));
  return buf;
}

// By symbol, by its raw address and at the next symbol's offset, a probe
// is taken; a negative offset and one that wraps around are refused. The
// symbol and address probes fire for the same calls: a new instance
// creates its directories through tracefs_create_dir.
TEST_F(KprobePoint, SymbolAddressAndOffsets) {
  TRACEBED_COVERS("ftracetest: kprobe/probepoint.tc");
  const std::string func = "tracefs_create_dir";
  Around a = around(*this, func);
  ASSERT_NE(a.self, 0u) << func << " not in /proc/kallsyms";
  auto by_name = create(raw_kprobe(unique("testprobe"), func).def());
  auto by_addr = create(raw_kprobe(unique("testprobe"), hex(a.self)).def());
  ASSERT_OK(by_name);
  ASSERT_OK(by_addr);
  {
    auto at_next = create(raw_kprobe(unique("testprobe"), func + "+" + std::to_string(a.next - a.self)).def());
    EXPECT_OK(at_next);
  }
  RawDefinition before = raw_kprobe(unique("testprobe"), func + "-" + std::to_string(a.self - a.prev));
  EXPECT_FALSE(create(before.def()).ok()) << before.text;
  RawDefinition wraps = raw_kprobe(unique("testprobe"), func + "+" + hex(a.prev - a.self));
  EXPECT_FALSE(create(wraps.def()).ok()) << wraps.text;

  ASSERT_OK(by_name->enable(inst()));
  ASSERT_OK(by_addr->enable(inst()));
  another_instance();
  size_t named = 0, addressed = 0;
  for (const DecodedEvent& e : decoded({*by_name, *by_addr})) (e.name == by_name->name() ? named : addressed)++;
  EXPECT_GE(named, 1u) << "making an instance did not call " << func;
  EXPECT_EQ(addressed, named) << "one place, two spellings";
}

// The refusal came with 6.6 (b022f0c7e404, "tracing/kprobes: Return
// EADDRNOTAVAIL when func matches several symbols"), and tracefs shows no
// sign of it: 5.10 takes the symbol's first address.
const Feature kNonUniqueRefused = Feature::since_release("kprobes refusing non-unique symbols", 6, 6);

// A symbol /proc/kallsyms has twice (name_show, static in several files)
// is refused: "The symbol is not unique" (trace_kprobe.c NON_UNIQ_SYMBOL).
TEST_F(KprobePoint, NonUniqueSymbolIsRefused) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_non_uniq_symbol.tc");
  TRACEBED_REQUIRE(kNonUniqueRefused);
  std::string n = sh("grep -c -E '[[:alnum:]]+ t name_show$' /proc/kallsyms || true");
  if (std::stoi(n) <= 1) GTEST_SKIP() << "needs a non-unique symbol: name_show is in /proc/kallsyms " << n << " time(s)";
  RawDefinition dup = raw_kprobe(unique("test_non_unique"), "name_show");
  if (features().has(features::error_log)) {
    ExpectRefused(dup, "The symbol is not unique", dup.text.find("name_show"), EINVAL);
  } else {
    EXPECT_FALSE(create(dup.def()).ok());
  }
}

// kernel_clone+0 .. +255: the kernel takes a probe only at an instruction
// boundary inside the function. All taken fire together for one fork: the
// one at +0 exactly once, none more often than there were forks.
TEST_F(KprobePoint, EveryByteOffsetOfAFunction) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_insn_boundary.tc");
  std::vector<DynamicEvent> taken;
  std::string prefix = unique("ib");
  for (int i = 0; i < 256; ++i) {
    auto ev = create(raw_kprobe(prefix + "_" + std::to_string(i), std::string(kFork) + "+" + std::to_string(i)).def());
    if (ev) taken.push_back(std::move(*ev));
  }
  ASSERT_GE(taken.size(), 2u) << "fewer than two offsets of " << kFork << " taken";
  ASSERT_LT(taken.size(), 256u) << "every byte offset taken: the kernel does not check instruction boundaries";
  EXPECT_EQ(taken[0].name(), prefix + "_0");
  ASSERT_OK(inst().enable_system("kprobes", true));
  ProbeRun run = run_target_only({"wake", "1"});
  ASSERT_OK(inst().set_tracing_on(false));
  std::vector<EventName> names;
  for (const DynamicEvent& ev : taken) names.push_back({ev.group(), ev.name()});
  auto got = read_events(fs(), inst(), names);
  ASSERT_OK(got);
  EXPECT_EQ(got->missed, 0u);
  std::map<std::string, size_t> fired;
  for (const DecodedEvent& e : of_pid(got->events, run.pid)) fired[e.name]++;
  EXPECT_EQ(fired[prefix + "_0"], 1u) << "one fork, one hit at +0";
  for (const auto& [name, n] : fired) EXPECT_LE(n, 1u) << name;
  ASSERT_OK(inst().enable_system("kprobes", false));
}


const Feature kFunctionEvent = Feature::event("ftrace", "function");

// A kprobe and the function tracer on the same function (one ftrace
// call site, shared when KPROBES_ON_FTRACE) see every call each, and
// switching one off or on leaves the other as it was.
TEST_F(KprobePoint, BesideTheFunctionTracer) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_ftrace.tc");
  TRACEBED_REQUIRE(features::function_tracer);
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  TRACEBED_REQUIRE(kFunctionEvent);
  auto probe = create(raw_kprobe(unique("testprobe"), kFork).def());
  ASSERT_OK(probe);
  std::vector<std::string> filter = {kFork};
  ASSERT_OK(inst().set_ftrace_filter(filter));
  struct Step {
    const char* tracer;
    bool probe_on;
  };
  for (Step step : {Step{"nop", true}, Step{"function", true}, Step{"function", false}, Step{"function", true},
                    Step{"nop", true}}) {
    SCOPED_TRACE(std::string(step.tracer) + (step.probe_on ? ", kprobe on" : ", kprobe off"));
    ASSERT_OK(inst().set_tracer(step.tracer));
    ASSERT_OK(step.probe_on ? probe->enable(inst()) : probe->disable(inst()));
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(inst().set_tracing_on(true));
    ProbeRun run = run_target_only({"wake", "1"});
    size_t probes = 0, calls = 0;
    for (const DecodedEvent& e : of_pid(decoded({*probe, {"ftrace", "function"}}), run.pid))
      (e.name == "function" ? calls : probes)++;
    bool tracing = std::string_view(step.tracer) == "function";
    EXPECT_EQ(probes, step.probe_on ? 1u : 0u) << "one fork";
    EXPECT_EQ(calls, tracing ? 1u : 0u) << "one fork";
  }
  ASSERT_OK(inst().set_tracer("nop"));
}

// +u0($arg2):string and +0($arg2):ustring read the user's path alike; on
// a kernel pointer both are a fault, which trace prints as (fault).
TEST_F(KprobePoint, UserMemoryFetches) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_args_user.tc");
  TRACEBED_REQUIRE(features::fetcharg_argn);
  TRACEBED_REQUIRE(features::type_ustring);
  TRACEBED_REQUIRE(features::fetcharg_user_deref);
  auto open = create(raw_kprobe(unique("myevent"), "do_sys_openat2 path=+0($arg2):ustring path2=+u0($arg2):string").def());
  ASSERT_OK(open);
  auto entry = listed(*open);
  ASSERT_TRUE(entry);
  EXPECT_THAT(entry->line, HasSubstr("path=+0($arg2):ustring path2=+u0($arg2):string"));
  ASSERT_OK(open->enable(inst()));
  ProbeRun run = run_target_only({"open", "/dev/null", "/etc/tracebed/release"}, {.start_tracing = true});
  std::vector<DecodedEvent> events = of_pid(decoded(*open), run.pid);
  EXPECT_THAT(str_fields(events, "path"), ElementsAre("/dev/null", "/etc/tracebed/release"));
  EXPECT_THAT(str_fields(events, "path2"), ElementsAre("/dev/null", "/etc/tracebed/release"));
  ASSERT_OK(open->disable(inst()));

  auto symlink = create(raw_kprobe(unique("myevent"), "vfs_symlink path=+0($arg3):ustring path2=+u0($arg3):string").def());
  ASSERT_OK(symlink);
  ASSERT_OK(symlink->enable(inst()));
  ASSERT_OK(inst().set_event_pids({}));  // any task: the shell's ln makes the link
  ASSERT_OK(inst().clear_trace());
  ASSERT_OK(inst().set_tracing_on(true));
  sh("rm -f /tmp/tb_bar; ln -s foo /tmp/tb_bar; rm -f /tmp/tb_bar");
  ASSERT_OK(inst().set_tracing_on(false));
  auto trace = inst().read_trace();
  ASSERT_OK(trace);
  size_t faults = 0;
  for (const std::string& line : trace_lines(*trace))
    if (line.find(symlink->name() + ":") != std::string::npos) {
      EXPECT_THAT(line, HasSubstr("path=(fault) path2=(fault)"));
      ++faults;
    }
  EXPECT_EQ(faults, 1u) << *trace;
}

// With OPTPROBES, a kprobe at some offset of kernel_clone is turned into
// a jump (debugfs kprobes/list says OPTIMIZED) and, optimized, still
// records the probe target's one fork exactly once.
TEST_F(KprobePoint, SomeOffsetIsOptimizedAndStillFires) {
  TRACEBED_COVERS("ftracetest: kprobe/kprobe_opt_types.tc");
  if (sh("test -e /proc/sys/debug/kprobes-optimization && test -e /sys/kernel/debug/kprobes/list && echo yes || true")
          .find("yes") == std::string::npos)
    GTEST_SKIP() << "needs /proc/sys/debug/kprobes-optimization and debugfs kprobes/list (OPTPROBES, DEBUG_FS)";
  std::string saved(tracefs::trim(sh("cat /proc/sys/debug/kprobes-optimization")));
  sh("echo 1 > /proc/sys/debug/kprobes-optimization");
  std::string prefix = unique("opt");
  bool optimized = false;
  for (int i = 0; i < 256 && !optimized; ++i) {
    auto ev = create(raw_kprobe(prefix + "_" + std::to_string(i), std::string(kFork) + "+" + std::to_string(i)).def());
    if (!ev || !ev->enable(inst()).ok()) continue;
    // kprobes/list names it kernel_clone+0x<offset>. The optimizer runs
    // OPTIMIZE_DELAY (5) jiffies later: forks until then.
    std::string at = " " + std::string(kFork) + "+" + hex(static_cast<uint64_t>(i)) + " ";
    std::string line = sh("for t in 1 2 3 4 5 6 7 8 9 10; do (echo forked) > /dev/null; "
                          "grep -q '" + at + ".*OPTIMIZED' /sys/kernel/debug/kprobes/list && break; done; "
                          "grep '" + at + "' /sys/kernel/debug/kprobes/list || true");
    if (line.find("[OPTIMIZED]") == std::string::npos) continue;
    optimized = true;
    SCOPED_TRACE(line);
    ASSERT_OK(inst().clear_trace());
    ProbeRun run = run_target_only({"wake", "1"});
    EXPECT_THAT(of_pid(decoded(*ev), run.pid), SizeIs(1)) << "one fork through the optimized probe";
  }
  sh("echo " + saved + " > /proc/sys/debug/kprobes-optimization");
  EXPECT_TRUE(optimized) << "no offset of " << kFork << " was optimized";
}

}  // namespace
}  // namespace tracebed::suites
