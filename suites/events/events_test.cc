// ftracetest event/ in spirit, in a fresh instance per test.
#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdint>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Events = TracefsTest;

const tracefs::Feature fields_option = tracefs::Feature::option("fields");
const tracefs::Feature irq_disable_event = tracefs::Feature::event("preemptirq", "irq_disable");
const tracefs::Feature kExecEventFields = tracefs::Feature::event("sched", "sched_process_exec");

// A line of `trace` printed with the fields option (trace_output.c
// print_fields): "EVENT: name=value name=value ...", each name with the
// text up to the next; empty when the line is not of EVENT.
std::vector<std::pair<std::string, std::string>> printed_fields(const std::string& line, const std::string& event) {
  std::vector<std::pair<std::string, std::string>> out;
  const size_t at = line.find(" " + event + ":");
  if (at == std::string::npos) return out;
  const std::string rest = line.substr(at + event.size() + 2);
  static const std::regex name(R"( (\w+)=)");
  size_t value_at = 0;  // where the last name's value starts
  for (auto it = std::sregex_iterator(rest.begin(), rest.end(), name); it != std::sregex_iterator(); ++it) {
    const size_t here = static_cast<size_t>(it->position());
    if (!out.empty()) out.back().second = rest.substr(value_at, here - value_at);
    out.emplace_back((*it)[1], "");
    value_at = here + it->length();
  }
  if (!out.empty()) out.back().second = rest.substr(value_at);
  for (auto& [field, value] : out) value.erase(value.find_last_not_of(" \n") + 1);
  return out;
}

// A system's directory counts its events (trace_events.c
// event_subsystem_dir: the first event makes it with one, each more adds
// one, removing the last removes it): two kprobes in a group of their own
// make events/GROUP at the top level and in an instance, with the
// system's enable and filter files; it stays while one of them is left,
// and goes from both once the second is removed.
TEST_F(Events, SystemDirectoryGoesWithItsLastEvent) {
  TRACEBED_REQUIRE(tracefs::features::kprobes);
  const std::string group = unique("tbsys");
  const std::string dir = "events/" + group;
  std::vector<tracefs::DynamicEvent> probes;
  for (const char* kind : {"a", "b"}) {
    const std::string name = unique(kind);
    auto p = create(tracefs::DynEventDef{tracefs::DynEventKind::kprobe, group, name,
                                         "p:" + group + "/" + name + " vfs_read"});
    ASSERT_OK(p);
    probes.push_back(std::move(*p));
  }
  const tracefs::Instance top = fs().top();
  const std::vector<const tracefs::Instance*> both = {&top, &inst()};
  for (const tracefs::Instance* in : both) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    EXPECT_TRUE(in->files().has(dir + "/enable"));
    EXPECT_TRUE(in->files().has(dir + "/filter"));
  }
  ASSERT_OK(probes[0].destroy());
  for (const tracefs::Instance* in : both) {
    EXPECT_TRUE(in->files().has(dir + "/enable")) << (in->is_top() ? "top level" : "instance")
                                                  << ": the group's directory went with its first event";
  }
  ASSERT_OK(probes[1].destroy());
  for (const tracefs::Instance* in : both) {
    EXPECT_FALSE(in->files().has(dir)) << (in->is_top() ? "top level" : "instance")
                                       << ": the group's directory outlived its last event";
  }
}

// The ftrace system (the tracer's own records: function, print, ...) has
// event directories but none of a system's files (trace_events.c
// event_subsystem_dir): no enable or filter under events/ftrace, at the
// top level or in an instance, where events/sched has both.
TEST_F(Events, FtraceSystemHasNoEnableOrFilterFile) {
  const tracefs::Instance top = fs().top();
  for (const tracefs::Instance* in : std::vector<const tracefs::Instance*>{&top, &inst()}) {
    SCOPED_TRACE(in->is_top() ? "top level" : "instance");
    EXPECT_TRUE(in->files().has("events/ftrace/print/format"));
    EXPECT_FALSE(in->files().has("events/ftrace/enable"));
    EXPECT_FALSE(in->files().has("events/ftrace/filter"));
    EXPECT_TRUE(in->files().has("events/sched/enable"));
    EXPECT_TRUE(in->files().has("events/sched/filter"));
  }
}

// event-enable.tc: one event enabled, only it is recorded.
TEST_F(Events, EnablingOneEventRecordsOnlyIt) {
  TRACEBED_COVERS("ftracetest: event/event-enable.tc");
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  EXPECT_TRUE(inst().event("sched", "sched_switch").enabled().value());
  sh("sleep 0.1");
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, Not(IsEmpty()));
  EXPECT_THAT(lines, Each(HasSubstr("sched_switch: prev_comm=")));
  ASSERT_OK(inst().event("sched", "sched_switch").disable());
  EXPECT_FALSE(inst().event("sched", "sched_switch").enabled().value());
}

// subsystem-enable.tc: the system's enable file turns on all its events.
TEST_F(Events, EnablingASystemEnablesAllItsEvents) {
  TRACEBED_COVERS("ftracetest: event/subsystem-enable.tc");
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().enable_system("sched", true));
  auto events = inst().system_events("sched");
  ASSERT_OK(events);
  auto enabled = inst().set_event();
  ASSERT_OK(enabled);
  for (const std::string& e : *events) EXPECT_THAT(*enabled, Contains(EventName{"sched", e}));
  ASSERT_OK(inst().enable_system("sched", false));
  EXPECT_THAT(inst().set_event().value(), IsEmpty());
}

// toplevel-enable.tc: events/enable switches every event.
TEST_F(Events, TopLevelEnableSwitchesEverything) {
  TRACEBED_COVERS("ftracetest: event/toplevel-enable.tc");
  ASSERT_OK(inst().enable_all_events(true));
  EXPECT_GT(inst().set_event().value().size(), 100u);
  ASSERT_OK(inst().enable_all_events(false));
  EXPECT_THAT(inst().set_event().value(), IsEmpty());
}

// event-enable.tc via set_event, each step's set exact: "sys:event" is
// that event alone; "*:event" adds the one event of that name in any
// system (a glob is a whole "*", not a prefix); "sys:*" all the system's
// events; "!sys:event" takes one
// away again, the event's own enable file reads 0 and the system's "X"
// (some on); an event's name without its system ("sched_switch") names
// it too. Emptied, nothing is left.
TEST_F(Events, SetEventAcceptsNamesGlobsAndNegation) {
  TRACEBED_REQUIRE(features::sched_events);
  auto names = inst().system_events("sched");
  ASSERT_OK(names);
  std::set<EventName> all;
  for (const std::string& e : *names) all.insert(EventName{"sched", e});
  ASSERT_GT(all.size(), 3u);
  auto set_event = [&] {
    auto v = inst().set_event();
    EXPECT_OK(v);
    return v ? std::set<EventName>(v->begin(), v->end()) : std::set<EventName>{};
  };
  ASSERT_OK(inst().add_set_event("sched:sched_switch"));
  EXPECT_EQ(set_event(), (std::set<EventName>{EventName{"sched", "sched_switch"}}));
  ASSERT_OK(inst().add_set_event("*:sched_wakeup"));
  std::set<EventName> want = {EventName{"sched", "sched_switch"}, EventName{"sched", "sched_wakeup"}};
  EXPECT_EQ(set_event(), want);
  ASSERT_OK(inst().add_set_event("sched:*"));
  EXPECT_EQ(set_event(), all);
  ASSERT_OK(inst().add_set_event("!sched:sched_wakeup"));
  want = all;
  want.erase(EventName{"sched", "sched_wakeup"});
  EXPECT_EQ(set_event(), want);
  EXPECT_EQ(inst().event("sched", "sched_wakeup").enable_state().value(), "0");
  EXPECT_EQ(inst().files().read("events/sched/enable").value(), "X\n");
  ASSERT_OK(inst().clear_set_event());
  EXPECT_THAT(set_event(), IsEmpty());
  ASSERT_OK(inst().add_set_event("sched_switch"));
  EXPECT_EQ(set_event(), (std::set<EventName>{EventName{"sched", "sched_switch"}}));
  ASSERT_OK(inst().clear_set_event());
  EXPECT_THAT(set_event(), IsEmpty());
}

TEST_F(Events, UnknownEventInSetEventIsRejected) {
  auto err = inst().files().try_write("set_event", "nosuchsystem:nosuchevent");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

// event-pid.tc: set_event_pid limits events to those pids.
TEST_F(Events, SetEventPidLimitsEventsToThatPid) {
  TRACEBED_REQUIRE(features::set_event_pid);
  TRACEBED_REQUIRE(features::sched_events);
  // kthreadd (pid 2) never execs. Not a made-up pid: older kernels
  // (5.10) refuse pids at or above pid_max.
  ASSERT_OK(inst().set_event_pids(std::vector<int>{2}));
  EXPECT_THAT(inst().event_pids().value(), ElementsAre(2));
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  sh("true; true");
  EXPECT_THAT(trace_lines(inst()), IsEmpty());
  ASSERT_OK(inst().set_event_pids({}));
  sh("true; true");
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("sched_process_exec")));
}

TEST_F(Events, FormatNamesTheEventAndItsId) {
  TRACEBED_REQUIRE(features::sched_events);
  tracefs::Event ev = inst().event("sched", "sched_switch");
  auto format = ev.format();
  ASSERT_OK(format);
  EXPECT_THAT(*format, AllOf(HasSubstr("name: sched_switch\n"), HasSubstr("field:char prev_comm[16];"),
                             HasSubstr("print fmt:")));
  auto id = ev.id();
  ASSERT_OK(id);
  EXPECT_EQ(*id, tracefs::parse_format_id(*format).value());
  // The same event has the same id in every instance.
  EXPECT_EQ(fs().top().event("sched", "sched_switch").id().value(), *id);
}

TEST_F(Events, AvailableEventsListsWhatEventsHolds) {
  TRACEBED_COVERS("ftracetest: 00basic/basic4.tc");
  auto available = fs().available_events();
  ASSERT_OK(available);
  EXPECT_THAT(*available, Contains(EventName{"sched", "sched_switch"}));
  auto systems = inst().event_systems();
  ASSERT_OK(systems);
  EXPECT_THAT(*systems, Contains("sched"));
}

// Honesty check: sched_switch events decoded from the raw pages agree with
// the kernel's own `trace` text on count and on every prev_pid/next_pid,
// and the pages hold nothing else. The probe target wakes a child 100 times
// (each wake-up a switch to the child): hundreds of switches, so a record
// lost at a page's end, or one too many, shows.
TEST_F(Events, DecodedSwitchesAgreeWithTheKernelsText) {
  TRACEBED_REQUIRE(features::sched_events);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  ProbeRun run = run_target({"wake", "100"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto woken = run.lines_of("wake");
  ASSERT_THAT(woken, SizeIs(100));
  const int64_t sleeper = std::stoll(woken[0].at(1));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(Ge(200u)));
  std::vector<::testing::Matcher<const DecodedEvent&>> from_text;
  std::regex pids(R"(prev_pid=(\d+) .* next_pid=(\d+))");
  for (const std::string& l : lines) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(l, m, pids)) << l;
    from_text.push_back(AllOf(FieldEq("prev_pid", std::stoll(m[1])), FieldEq("next_pid", std::stoll(m[2]))));
  }
  // `trace` merges the CPUs by time stamp; compared as a multiset, as the
  // order of equal stamps on two CPUs is not the text's to promise.
  std::vector<DecodedEvent> events = decoded_only({"sched", "sched_switch"});
  EXPECT_THAT(events, UnorderedElementsAreArray(from_text));
  const auto to_sleeper = std::count_if(events.begin(), events.end(),
                                        [&](const DecodedEvent& e) { return int_field(e, "next_pid") == sleeper; });
  EXPECT_GE(to_sleeper, 100) << "each of the 100 wake-ups switches to the child " << sleeper;
}

// The fields option prints each field of a record from its format: an
// int as "0x%x (%d)", a long as "%pS (%lld)", a comm as its text. On a
// hundred wake-ups' switches, every field of every line is the value the
// decoded page holds, and the names are the format's, in its order.
TEST_F(Events, FieldsOptionPrintsEveryFieldAsItsRecordHoldsIt) {
  TRACEBED_REQUIRE(features::sched_events);
  TRACEBED_REQUIRE(fields_option);
  ASSERT_OK(inst().event("sched", "sched_switch").enable());
  ProbeRun run = run_target({"wake", "100"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().set_option("fields", true));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(Ge(200u)));
  const std::vector<std::string> names = {"prev_comm", "prev_pid",  "prev_prio", "prev_state",
                                          "next_comm", "next_pid", "next_prio"};
  const std::regex number(R"(^(0x[0-9a-f]+|\S+) \((-?[0-9]+)\)$)");
  std::vector<::testing::Matcher<const DecodedEvent&>> from_text;
  for (const std::string& l : lines) {
    SCOPED_TRACE(l);
    std::vector<std::string> printed;
    std::vector<::testing::Matcher<const DecodedEvent&>> each;
    for (const auto& [field, value] : printed_fields(l, "sched_switch")) {
      printed.push_back(field);
      if (field.ends_with("_comm")) {
        each.push_back(FieldEq(field, value));
        continue;
      }
      std::smatch m;
      ASSERT_TRUE(std::regex_match(value, m, number)) << field << "=" << value;
      const int64_t v = std::stoll(m[2]);
      if (field != "prev_state") {  // a long: "%pS", the others "0x%x" of the same 32 bits
        EXPECT_EQ(std::stoul(m[1], nullptr, 16), static_cast<uint32_t>(v)) << field << "=" << value;
      }
      each.push_back(FieldEq(field, v));
    }
    ASSERT_EQ(printed, names);
    from_text.push_back(::testing::AllOfArray(each));
  }
  EXPECT_THAT(decoded_only({"sched", "sched_switch"}), UnorderedElementsAreArray(from_text));
}

// The fields option prints a dynamic string as it is while every byte is
// printable ASCII, and else each byte as itself or '.', then all of them in
// hex (trace_output.c print_fields): sched_process_exec's filename for an
// exec of "/tmp/tb<TAB>x" (a link to true) prints "/tmp/tb.x." and the 11
// bytes with its NUL, "(2f:74:6d:70:2f:74:62:09:78:00)" less one; one of
// /bin/true prints as it is.
TEST_F(Events, FieldsOptionShowsAStringsUnprintableBytesInHex) {
  TRACEBED_REQUIRE(fields_option);
  TRACEBED_REQUIRE(kExecEventFields);
  ASSERT_OK(inst().event("sched", "sched_process_exec").enable());
  sh("ln -sf /bin/true \"/tmp/tb$(printf '\\t')x\" && \"/tmp/tb$(printf '\\t')x\"; /bin/true; "
     "rm -f \"/tmp/tb$(printf '\\t')x\"");
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_OK(inst().set_option("fields", true));
  std::vector<std::string> filenames;
  for (const std::string& l : trace_lines(inst()))
    for (const auto& [field, value] : printed_fields(l, "sched_process_exec"))
      if (field == "filename") filenames.push_back(value);
  std::string with_tab = "/tmp/tb\tx";
  std::string dotted, hex;
  for (size_t i = 0; i <= with_tab.size(); ++i) {  // and its NUL
    const unsigned char c = i < with_tab.size() ? static_cast<unsigned char>(with_tab[i]) : 0;
    dotted += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '.';
    hex += fmt::format("{}{:02x}", i ? ":" : "", c);
  }
  // print_fields learned this between 6.12 (which prints the tab as it
  // is) and 7.2: before 7.2 either form is right.
  const std::string shown = dotted + " (" + hex + ")";
  if (features().release_version() < std::pair{7, 2}) {
    EXPECT_THAT(filenames, AnyOf(Contains(shown), Contains(with_tab)));
    EXPECT_THAT(filenames, Contains("/bin/true"));
  } else {
    EXPECT_THAT(filenames, ::testing::IsSupersetOf({shown, std::string("/bin/true")}));
  }
}

// preemptirq's caller_offs and parent_offs are offsets from _stext (s32),
// which the fields option resolves to symbols ("%pS " before the number):
// the symbols the event's own print_fmt names from _stext plus the same
// offsets. The same records read twice, the option off, then on.
TEST_F(Events, FieldsOptionNamesTheSymbolsOfStextOffsets) {
  TRACEBED_REQUIRE(fields_option);
  TRACEBED_REQUIRE(irq_disable_event);
  ASSERT_OK(inst().set_buffer_size_kb(16));
  ASSERT_OK(inst().event("preemptirq", "irq_disable").enable());
  sh("sleep 0.2");
  ASSERT_OK(inst().set_tracing_on(false));
  const std::vector<std::string> as_printed = trace_lines(inst());
  ASSERT_OK(inst().set_option("fields", true));
  const std::vector<std::string> as_fields = trace_lines(inst());
  ASSERT_THAT(as_printed, SizeIs(Ge(50u)));
  ASSERT_EQ(as_fields.size(), as_printed.size());
  const std::regex printed(R"(irq_disable: caller=(\S+) parent=(\S+))");
  const std::regex fields(R"(irq_disable: caller_offs=(\S+) 0x[0-9a-f]+ \(-?[0-9]+\) parent_offs=(\S+) 0x[0-9a-f]+ \(-?[0-9]+\))");
  for (size_t i = 0; i < as_printed.size(); ++i) {
    std::smatch p, f;
    ASSERT_TRUE(std::regex_search(as_printed[i], p, printed)) << as_printed[i];
    ASSERT_TRUE(std::regex_search(as_fields[i], f, fields)) << as_fields[i];
    EXPECT_EQ(f[1], p[1]) << as_fields[i];
    EXPECT_EQ(f[2], p[2]) << as_fields[i];
  }
}

const tracefs::Feature hash_ptr_option = tracefs::Feature::option("hash-ptr");
const tracefs::Feature hrtimer_start_event = tracefs::Feature::event("timer", "hrtimer_start");

// With hash-ptr off, an event's %p prints the address itself: trace.c
// trace_event_format rewrites each %p of the format to %px in the
// iterator's own format buffer, which starts empty and grows (it falls
// back to the format as it is when it cannot). 30 sleeps of one task give
// 30 or more timer:hrtimer_start records ("hrtimer=%p"); in every one, the
// printed pointer is the field's value as the fields option prints it
// (its "(%lld)", the 8 bytes the record holds), and with hash-ptr on, as
// by default, in none.
TEST_F(Events, HashPtrOffPrintsEachPointerAsTheRecordHoldsIt) {
  TRACEBED_REQUIRE(hash_ptr_option);
  TRACEBED_REQUIRE(fields_option);
  TRACEBED_REQUIRE(hrtimer_start_event);
  ASSERT_OK(inst().event("timer", "hrtimer_start").enable());
  run_target_only({"sleep", "1", "30"});
  ASSERT_OK(inst().set_tracing_on(false));
  auto printed_pointers = [&] {
    const std::regex printed(R"(hrtimer_start: hrtimer=([0-9a-f]+) )");
    std::vector<std::string> out;
    for (const std::string& l : trace_lines(inst())) {
      std::smatch m;
      out.push_back(std::regex_search(l, m, printed) ? m[1].str() : "no pointer in: " + l);
    }
    return out;
  };
  ASSERT_OK(inst().set_option("hash-ptr", false));
  const std::vector<std::string> raw = printed_pointers();
  ASSERT_OK(inst().set_option("hash-ptr", true));
  const std::vector<std::string> hashed = printed_pointers();
  ASSERT_OK(inst().set_option("fields", true));
  std::vector<std::string> held;  // each record's hrtimer as 16 hex digits
  const std::regex field(R"(hrtimer_start: hrtimer=\S+ \((-?[0-9]+)\))");
  for (const std::string& l : trace_lines(inst())) {
    std::smatch m;
    ASSERT_TRUE(std::regex_search(l, m, field)) << l;
    held.push_back(fmt::format("{:016x}", static_cast<uint64_t>(std::stoll(m[1].str()))));
  }
  ASSERT_THAT(held, SizeIs(Ge(30u)));
  ASSERT_EQ(raw.size(), held.size());
  ASSERT_EQ(hashed.size(), held.size());
  for (size_t i = 0; i < held.size(); ++i) {
    EXPECT_EQ(raw[i], held[i]) << "record " << i << " with hash-ptr off";
    EXPECT_NE(hashed[i], held[i]) << "record " << i << " with hash-ptr on";
  }
}

// The context column of `trace` (trace_output.c trace_print_lat_fmt, the
// third flag): 's' for a record made in a softirq, 'h' in a hard
// interrupt, 'H' in a hard interrupt that came during a softirq, '.' in a
// task. softirq_entry runs only with the softirq count (softirqs never run
// inside a hard interrupt), hrtimer_expire_entry from the timer interrupt,
// mostly outside softirqs, and a marker is written by the task.
TEST_F(Events, ContextFlagSaysSoftirqHardirqOrTask) {
  const Event softirq = inst().event("irq", "softirq_entry"), hrtimer = inst().event("timer", "hrtimer_expire_entry");
  if (!softirq.exists() || !hrtimer.exists())
    GTEST_SKIP() << "needs irq:softirq_entry and timer:hrtimer_expire_entry";
  ASSERT_OK(softirq.enable());
  ASSERT_OK(hrtimer.enable());
  sh("sleep 0.5");
  ASSERT_OK(inst().write_marker("tbcontext"));
  ASSERT_OK(inst().set_tracing_on(false));
  // "  sh-123  [001] d.h1.  12.345678: hrtimer_expire_entry: ..."
  const std::regex line(R"(\[[0-9]+\] (\S)(\S)(\S)\S+ +[0-9.]+: (\w+):)");
  std::map<std::string, std::map<char, int>> flags;  // event -> third flag -> records
  for (const std::string& l : trace_lines(inst())) {
    std::smatch m;
    if (std::regex_search(l, m, line)) ++flags[m[4]][m[3].str()[0]];
  }
  auto of = [&](const std::string& e) { return ::testing::PrintToString(flags[e]); };
  ASSERT_GT(flags["softirq_entry"]['s'], 0) << of("softirq_entry");
  EXPECT_THAT(flags["softirq_entry"], SizeIs(1)) << "softirq_entry outside a softirq: " << of("softirq_entry");
  EXPECT_GT(flags["hrtimer_expire_entry"]['h'], 0) << of("hrtimer_expire_entry");
  for (char c : {'s', '.'}) EXPECT_EQ(flags["hrtimer_expire_entry"].count(c), 0u) << of("hrtimer_expire_entry");
  EXPECT_EQ(flags["tracing_mark_write"]['.'], 1) << of("tracing_mark_write");
}

const tracefs::Feature kInject = tracefs::Feature::file("event injection", "events/sched/sched_switch/inject");

// events/<system>/<event>/inject (trace_events_inject.c): a line of
// FIELD=VALUE writes one record of the event with those fields and zero
// in the rest, the event enabled or not. Numbers at the ends of each
// field's range (an int's -1, INT_MIN and INT_MAX, a long's highest bit,
// hex), a fixed char[16] cut to 15 characters and a dynamic string of 1 to
// 255 bytes (MAX_FILTER_STR_VAL is 256): every injected record decodes as
// written, and nothing else is recorded. A field the event lacks is ENOENT,
// a string for a number, a number for a string, an open quote, a 256-byte
// string and a page-long line EINVAL, and none leaves a record.
TEST_F(Events, InjectWritesTheRecordItIsGivenAndNothingElse) {
  TRACEBED_REQUIRE(kInject);
  Event sw = inst().event("sched", "sched_switch"), exec = inst().event("sched", "sched_process_exec");
  struct Switch {
    std::string prev_comm;
    int64_t prev_pid, prev_prio, prev_state, next_pid;
  };
  std::vector<Switch> switches;
  const int64_t edges[] = {-1, INT32_MIN, INT32_MAX, 0, 1};
  for (int i = 0; i < 50; ++i) {
    const std::string comm(1 + i % 20, static_cast<char>('a' + i % 26));
    switches.push_back({comm, edges[i % 5], edges[(i + 1) % 5], i % 7 == 0 ? INT64_MIN : int64_t{1} << (i % 63),
                        edges[(i + 2) % 5]});
  }
  for (const Switch& w : switches)
    // A signed field takes a signed number (kstrtoll): hex for the others.
    ASSERT_OK(sw.files().write(
        "inject", fmt::format("prev_comm=\"{}\" prev_pid={} prev_prio={} prev_state={} next_pid={}", w.prev_comm,
                              w.prev_pid, w.prev_prio,
                              w.prev_state < 0 ? std::to_string(w.prev_state) : fmt::format("{:#x}", w.prev_state),
                              w.next_pid)));
  std::vector<std::string> filenames;
  for (size_t len : {1, 15, 16, 17, 64, 255}) filenames.push_back("/" + std::string(len - 1, 'f'));
  for (size_t i = 0; i < filenames.size(); ++i)
    ASSERT_OK(exec.files().write("inject", fmt::format("filename='{}' pid={} old_pid=-{}", filenames[i], i, i)));
  for (const auto& [line, err] : std::vector<std::pair<std::string, int>>{
           {"nofield=1", ENOENT},
           {"prev_pid=\"one\"", EINVAL},
           {"prev_comm=7", EINVAL},
           {"prev_comm=\"open", EINVAL},
           {"prev_pid=12z", EINVAL},
           {"prev_comm=\"" + std::string(256, 'x') + "\"", EINVAL},
           {"prev_pid=1 " + std::string(4096, ' '), EINVAL},
       }) {
    auto got = sw.files().try_write("inject", line);
    ASSERT_OK(got);
    EXPECT_EQ(*got, err) << line.substr(0, 40);
  }
  auto long_name = exec.files().try_write("inject", "filename='/" + std::string(255, 'f') + "'");
  ASSERT_OK(long_name);
  EXPECT_EQ(*long_name, EINVAL) << "a 256-byte string";
  const std::vector<DecodedEvent> got = decoded({sw, exec});
  const std::vector<DecodedEvent> got_switches = named(got, "sched_switch"), got_execs = named(got, "sched_process_exec");
  ASSERT_THAT(got_switches, SizeIs(switches.size()));
  for (size_t i = 0; i < switches.size(); ++i) {
    SCOPED_TRACE(fmt::format("switch {}", i));
    const Switch& w = switches[i];
    EXPECT_EQ(str_field(got_switches[i], "prev_comm"), w.prev_comm.substr(0, 15));
    EXPECT_EQ(int_field(got_switches[i], "prev_pid"), w.prev_pid);
    EXPECT_EQ(int_field(got_switches[i], "prev_prio"), w.prev_prio);
    EXPECT_EQ(int_field(got_switches[i], "prev_state"), w.prev_state);
    EXPECT_EQ(int_field(got_switches[i], "next_pid"), w.next_pid);
    EXPECT_EQ(str_field(got_switches[i], "next_comm"), "") << "a field not given is zero";
    EXPECT_EQ(int_field(got_switches[i], "next_prio"), 0);
  }
  ASSERT_THAT(got_execs, SizeIs(filenames.size()));
  for (size_t i = 0; i < filenames.size(); ++i) {
    SCOPED_TRACE(fmt::format("exec {}", i));
    EXPECT_EQ(str_field(got_execs[i], "filename"), filenames[i]);
    EXPECT_EQ(int_field(got_execs[i], "pid"), static_cast<int64_t>(i));
    EXPECT_EQ(int_field(got_execs[i], "old_pid"), -static_cast<int64_t>(i));
  }
}

}  // namespace
}  // namespace tracebed::suites
