// tracebed_events' trace_printk and trace_puts, and its custom event on
// sched_switch (TRACE_CUSTOM_EVENT): what printk_formats lists for a
// module, what the bprint records point at, and the trimmed record the
// custom event keeps of each switch the scheduler's own event records.
#include <regex>

#include <fmt/format.h>

#include "framework/tracefs/tracefs_text.h"
#include "suites/modules/event_text.h"
#include "suites/modules/module_fixture.h"

namespace tracebed::suites {
namespace {

constexpr std::string_view kPrintkFormat = "tracebed_printk seq=%u value=%lld str=%s\\n";

class ModulesPrintk : public ModuleTest {
 public:
  ModulesPrintk() : ModuleTest({features::tracebed_events_module}) {}

 protected:
  void SetUpTest() override { load("tracebed_events"); }
};

// printk_formats maps the module's format strings to their addresses
// (kernel/trace/trace_printk.c); each bprint record's fmt field is that
// address, and `trace` prints the values written.
TEST_F(ModulesPrintk, TracePrintkFormatIsListedAndEveryRecordPrintsItsValues) {
  const Instance& t = top();
  std::string formats = top_file("printk_formats");
  uint64_t address = 0;
  for (auto line : tracefs::split_lines(formats))
    if (line.find(kPrintkFormat) != std::string_view::npos) address = std::stoull(std::string(line), nullptr, 16);
  ASSERT_NE(address, 0u) << "no \"" << kPrintkFormat << "\" in printk_formats:\n" << formats;
  EXPECT_THAT(formats, HasSubstr("tracebed_puts\\n"));
  ASSERT_OK(t.clear_trace());
  std::string lines;
  std::vector<std::string> want;
  for (int i = 0; i < 100; ++i) {
    int64_t value = i % 3 == 0 ? INT64_MIN + i : i % 3 == 1 ? INT64_MAX - i : i * 1000003LL;
    std::string s(1 + i % 40, static_cast<char>('A' + i % 26));
    lines += fmt::format("printk {} {} {}\nputs\n", i, value, s);
    want.push_back(fmt::format("tracebed_printk seq={} value={} str={}", i, value, s));
    want.push_back("tracebed_puts");
  }
  ASSERT_EQ(emit(lines), 0);
  ASSERT_OK(t.set_tracing_on(false));
  std::vector<std::string> got;
  // "<task> [cpu] ... ts: tracebed_emit_printk: tracebed_printk seq=..."
  for (const auto& l : trace_lines(t))
    if (auto pos = l.rfind(": tracebed_p"); pos != std::string::npos) got.push_back(l.substr(pos + 2));
  EXPECT_THAT(got, ElementsAreArray(want));
  // printk-msg-only (trace.c print_trace_line, trace_output.c
  // trace_print_bprintk_msg_only, trace_print_bputs_msg_only): the line is
  // the message alone, no task, CPU, time stamp or caller.
  ASSERT_OK(t.set_option("printk-msg-only", true));
  std::vector<std::string> msg_only;
  for (const auto& l : trace_lines(t))
    if (l.starts_with("tracebed_p")) msg_only.push_back(l);
  ASSERT_OK(t.set_option("printk-msg-only", false));
  EXPECT_THAT(msg_only, ElementsAreArray(want));
  // raw (trace_bprint_raw, trace_bputs_raw): "PID CPU TS : IP : message".
  ASSERT_OK(t.set_option("raw", true));
  std::vector<std::pair<uint64_t, std::string>> raw;
  const std::regex raw_line(R"(^[0-9]+ [0-9]+ [0-9]+ : ([0-9a-f]+) : (.*)$)");
  for (const auto& l : trace_lines(t)) {
    std::smatch m;
    if (std::regex_match(l, m, raw_line)) raw.emplace_back(std::stoull(m[1], nullptr, 16), m[2]);
  }
  ASSERT_OK(t.set_option("raw", false));
  auto records = decoded(t, {{"ftrace", "bprint"}, {"ftrace", "bputs"}});
  auto bprints = named(records, "bprint");
  ASSERT_THAT(bprints, SizeIs(100));
  for (const auto& e : bprints) EXPECT_EQ(static_cast<uint64_t>(int_field(e, "fmt")), address);
  ASSERT_THAT(records, SizeIs(want.size()));
  ASSERT_THAT(raw, SizeIs(want.size()));
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_EQ(raw[i].first, static_cast<uint64_t>(int_field(records[i], "ip"))) << want[i];
    EXPECT_EQ(raw[i].second, want[i]);
  }
}

// The custom event records three fields of sched_switch's nine: one record
// per switch, with the pids and priority sched:sched_switch has for it.
TEST_F(ModulesPrintk, CustomSchedSwitchKeepsTheTrimmedRecordOfEverySwitch) {
  Event custom = inst().event("custom", "sched_switch");
  ASSERT_TRUE(custom.exists()) << "no events/custom/sched_switch with tracebed_events loaded";
  auto format = custom.format();
  ASSERT_OK(format);
  for (const char* f : {"pid_t prev_pid;", "pid_t next_pid;", "unsigned short next_prio;"})
    EXPECT_THAT(*format, HasSubstr(f));
  EXPECT_THAT(*format, Not(HasSubstr("prev_comm")));
  // Probes on a tracepoint run in the order they were attached: the
  // scheduler's event first, so each custom record follows its own.
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  ASSERT_OK(custom.enable());
  ASSERT_OK(inst().clear_trace());  // a window with both events on from its start
  sh("for i in 1 2 3 4 5 6 7 8 9 10; do sleep 0.01; done");
  auto pairs = decoded({{"sched", "sched_switch"}, {"custom", "sched_switch"}}, Order::page);
  auto matched = probed_from(pairs, "sched/sched_switch", "custom/sched_switch");
  size_t switches = named(pairs, "sched/sched_switch").size();
  ASSERT_GT(switches, 10u);
  EXPECT_EQ(matched.size(), switches) << "custom records against sched_switch records";
  for (const auto& m : matched) {
    ASSERT_NE(m.source, nullptr) << "a custom record with no sched_switch before it";
    EXPECT_EQ(int_field(*m.probe, "prev_pid"), int_field(*m.source, "prev_pid"));
    EXPECT_EQ(int_field(*m.probe, "next_pid"), int_field(*m.source, "next_pid"));
    EXPECT_EQ(int_field(*m.probe, "next_prio"), int_field(*m.source, "next_prio"));
  }
}

}  // namespace
}  // namespace tracebed::suites
