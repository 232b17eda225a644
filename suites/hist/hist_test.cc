// ftracetest trigger/ hist cases in spirit: hist triggers in a fresh
// instance, their `hist` file parsed, and the probe target's entries checked
// against its events decoded from the same instance's pages.
//
// Why per pid and not the Totals: a hist counts events the buffer does not
// keep. With tracing_on=0 the kernel still runs triggers that need the
// record, through a temporary buffer (kernel/trace/trace.c
// trace_event_buffer_lock_reserve, EVENT_FILE_FL_TRIGGER_COND), so other
// tasks' events go on adding to Hits after the window closes. The probe
// target has exited by then: its entries are exact.
#include <algorithm>
#include <cstdint>
#include <map>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

using ::testing::Pointee;

// kernel/trace/trace_events_hist.c hist_field_log2: ilog2(roundup_pow_of_two(v)).
uint32_t kernel_log2(uint64_t v) {
  if (v <= 1) return 0;
  uint32_t bits = 64 - static_cast<uint32_t>(__builtin_clzll(v - 1));
  return bits;
}

// The example: keys=common_pid.execname. Each pid's hitcount is its
// number of decoded events, and the probe target's getpid calls (one for
// its "pid" line, then COUNT) are all there.
TEST_F(Hist, ExecnameKeysCountEveryDecodedEventPerPid) {
  TRACEBED_REQUIRE(getpid_event);
  Event ev = inst().event("syscalls", "sys_enter_getpid");
  ProbeRun probe;
  record(ev, {HistTrigger().key(HistField("common_pid").execname())}, [&] { probe = work({"getpid", "40"}); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  const HistSection& s = file.sections[0];
  EXPECT_EQ(s.totals.entries, s.entries.size());
  uint64_t decoded_of_target = of_pid(decoded(ev), probe.pid).size();
  EXPECT_GE(decoded_of_target, 41u);
  auto target = entries_of_pid(s, probe.pid);
  ASSERT_THAT(target, ElementsAre(Pointee(HitCount(decoded_of_target))));
  // The name when the entry was made: the shell, or after its exec the
  // program (cut at TASK_COMM_LEN - 1 = 15 characters).
  EXPECT_THAT(target[0]->key("common_pid")->symbol, ::testing::AnyOf("sh", "tracebed-probe-"));
}

// keys=common_pid,id.syscall names the syscall; getpid is 39 on x86_64
// (arch/x86/entry/syscalls/syscall_64.tbl).
TEST_F(Hist, SyscallKeysNameTheSyscall) {
  TRACEBED_REQUIRE(sys_enter_event);
  Event ev = inst().event("raw_syscalls", "sys_enter");
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key(HistField("id").syscall())}, [&] { probe = work({"getpid", "25"}); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> decoded_per_id;
  for (const DecodedEvent& e : decoded(ev))
    if (e.pid == probe.pid) decoded_per_id[static_cast<uint64_t>(int_field(e, "id"))]++;
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("id");
    ASSERT_TRUE(key && key->number) << (key ? key->text : "no id key");
    shown[*key->number] = entry->hitcount();
    if (*key->number == 39) {
      EXPECT_EQ(key->symbol, "sys_getpid");
    }
  }
  EXPECT_EQ(shown, decoded_per_id);
  EXPECT_GE(shown[39], 26u);
}

// .log2 puts each value v in bucket ilog2(roundup_pow_of_two(v)).
TEST_F(Hist, Log2KeysBucketTheDecodedValues) {
  TRACEBED_REQUIRE(kmalloc_event);
  Event ev = inst().event("kmem", "kmalloc");
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key(HistField("bytes_req").log2())}, [&] { probe = kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> expected;
  for (const DecodedEvent& e : decoded(ev))
    if (e.pid == probe.pid) expected[kernel_log2(static_cast<uint64_t>(int_field(e, "bytes_req")))]++;
  ASSERT_THAT(expected, Not(IsEmpty()));
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("bytes_req");
    ASSERT_TRUE(key && key->log2) << (key ? key->text : "no bytes_req key");
    shown[*key->log2] = entry->hitcount();
  }
  EXPECT_EQ(shown, expected);
}

// .buckets=64 puts v in [v/64*64, v/64*64+63].
TEST_F(Hist, BucketKeysGroupTheDecodedValues) {
  TRACEBED_REQUIRE(kmalloc_event);
  TRACEBED_REQUIRE(features::hist_buckets);
  Event ev = inst().event("kmem", "kmalloc");
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key(HistField("bytes_req").buckets(64))},
         [&] { probe = kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> expected;
  for (const DecodedEvent& e : decoded(ev))
    if (e.pid == probe.pid) expected[static_cast<uint64_t>(int_field(e, "bytes_req")) / 64 * 64]++;
  ASSERT_THAT(expected, Not(IsEmpty()));
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("bytes_req");
    ASSERT_TRUE(key && key->bucket) << (key ? key->text : "no bytes_req key");
    EXPECT_EQ(key->bucket->second, key->bucket->first + 63) << key->text;
    shown[key->bucket->first] = entry->hitcount();
  }
  EXPECT_EQ(shown, expected);
}

// vals=bytes_req sums the field per key.
TEST_F(Hist, ValuesSumTheDecodedField) {
  TRACEBED_REQUIRE(kmalloc_event);
  Event ev = inst().event("kmem", "kmalloc");
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").val("bytes_req")}, [&] { probe = kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  uint64_t sum = 0, count = 0;
  for (const DecodedEvent& e : decoded(ev))
    if (e.pid == probe.pid) {
      sum += static_cast<uint64_t>(int_field(e, "bytes_req"));
      ++count;
    }
  ASSERT_GT(count, 0u);
  EXPECT_THAT(entries_of_pid(file.sections[0], probe.pid),
              ElementsAre(Pointee(AllOf(HistValueThat("bytes_req", sum), HitCount(count)))));
}

// Two hist triggers on one event: two sections, each counting every event.
TEST_F(Hist, TwoHistsOnOneEventBothCountEveryEvent) {
  TRACEBED_REQUIRE(kmalloc_event);
  Event ev = inst().event("kmem", "kmalloc");
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid"), HistTrigger().key("common_pid").key("bytes_req").val("bytes_alloc")},
         [&] { probe = kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(2));
  uint64_t n = of_pid(decoded(ev), probe.pid).size();
  EXPECT_GT(n, 0u);
  for (const HistSection& s : file.sections) {
    SCOPED_TRACE(s.trigger_info);
    uint64_t hits = 0;
    for (const auto* entry : entries_of_pid(s, probe.pid)) hits += entry->hitcount();
    EXPECT_EQ(hits, n);
    EXPECT_EQ(s.totals.dropped, 0u);
  }
}

// sort=hitcount.descending orders the entries; the default is ascending.
TEST_F(Hist, SortOrdersTheEntries) {
  TRACEBED_REQUIRE(sys_enter_event);
  Event ev = inst().event("raw_syscalls", "sys_enter");
  record(ev, {HistTrigger().key("id").sort(HistField("hitcount").descending()), HistTrigger().key("id").val("hitcount")},
         [&] { work({"getpid", "30"}); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(2));
  auto counts = [](const HistSection& s) {
    std::vector<uint64_t> v;
    for (const auto& e : s.entries) v.push_back(e.hitcount());
    return v;
  };
  for (const HistSection& s : file.sections) {
    SCOPED_TRACE(s.trigger_info);
    ASSERT_THAT(s.entries, SizeIs(::testing::Gt(1u)));
    std::vector<uint64_t> v = counts(s);
    if (s.trigger.sort_keys().empty() || !s.trigger.sort_keys()[0].has("descending"))
      EXPECT_TRUE(std::is_sorted(v.begin(), v.end()));
    else
      EXPECT_TRUE(std::is_sorted(v.rbegin(), v.rend()));
  }
}

// A filtered hist counts only the matching events.
TEST_F(Hist, FilterLimitsWhatIsCounted) {
  TRACEBED_REQUIRE(kmalloc_event);
  Event ev = inst().event("kmem", "kmalloc");
  record(ev, {HistTrigger().key("bytes_req").filter("bytes_req > 100")}, [&] { kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::vector<int64_t> sizes = int_fields(decoded(ev), "bytes_req");
  uint64_t matching = std::count_if(sizes.begin(), sizes.end(), [](int64_t v) { return v > 100; });
  EXPECT_EQ(file.sections[0].totals.hits, matching);
  for (const auto& entry : file.sections[0].entries) {
    const tracefs::HistKey* key = entry.key("bytes_req");
    ASSERT_TRUE(key && key->number);
    EXPECT_GT(*key->number, 100u);
  }
}

// pause stops counting, cont resumes, clear empties the table.
TEST_F(Hist, PauseContinueAndClear) {
  TRACEBED_REQUIRE(getpid_event);
  Event ev = inst().event("syscalls", "sys_enter_getpid");
  HistTrigger h = HistTrigger().key("common_pid");
  ASSERT_OK(ev.add_trigger(h.trigger()));
  ASSERT_OK(ev.enable());
  auto hits = [&] {
    HistFile f = hist_of(ev);
    return f.sections.empty() ? uint64_t{0} : f.sections[0].totals.hits;
  };
  run_target({"getpid", "10"});
  uint64_t before = hits();
  EXPECT_GE(before, 11u);

  ASSERT_OK(ev.add_trigger(HistTrigger(h).pause().trigger()));
  run_target({"getpid", "10"});
  EXPECT_EQ(hits(), before) << "a paused hist kept counting";

  ASSERT_OK(ev.add_trigger(HistTrigger(h).cont().trigger()));
  run_target({"getpid", "10"});
  EXPECT_GE(hits(), before + 11);

  ASSERT_OK(ev.add_trigger(HistTrigger(h).clear().trigger()));
  EXPECT_THAT(hist_of(ev).sections,
              ElementsAre(AllOf(HistTotals(0, 0), ::testing::Field(&HistSection::entries, IsEmpty()))));
}

// nohitcount: the table shows only the values asked for.
TEST_F(Hist, NohitcountHidesTheHitcount) {
  TRACEBED_REQUIRE(kmalloc_event);
  TRACEBED_REQUIRE(features::hist_nohitcount);
  Event ev = inst().event("kmem", "kmalloc");
  record(ev, {HistTrigger().key("common_pid").val("bytes_req").nohitcount()}, [&] { kmalloc_work(); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  ASSERT_THAT(file.sections[0].entries, Not(IsEmpty()));
  for (const auto& entry : file.sections[0].entries) {
    EXPECT_EQ(entry.value("hitcount"), nullptr);
    EXPECT_NE(entry.value("bytes_req"), nullptr);
  }
}

// A hist on an unknown field is refused with the kernel's own words.
TEST_F(Hist, UnknownKeyIsExplainedByTheKernel) {
  TRACEBED_REQUIRE(kmalloc_event);
  TRACEBED_REQUIRE(features::error_log);
  Event ev = inst().event("kmem", "kmalloc");
  Status st = ev.add_trigger(HistTrigger().key("no_such_field").trigger());
  ASSERT_FALSE(st.ok());
  EXPECT_THAT(st.error().message, HasSubstr("hist:keys=no_such_field"));
  EXPECT_THAT(st.error().message, HasSubstr("Couldn't find field"));
  EXPECT_THAT(st.error().message, HasSubstr("^"));
}

// enable_hist / disable_hist start and stop another event's hist.
TEST_F(Hist, EnableHistAndDisableHistSwitchAnotherHist) {
  TRACEBED_REQUIRE(getpid_event);
  TRACEBED_REQUIRE(sched_events_exec);
  Event target = inst().event("syscalls", "sys_enter_getpid");
  Event exec = inst().event("sched", "sched_process_exec");
  HistTrigger h = HistTrigger().key("common_pid");
  // Paused from the start: only enable_hist may make it count.
  ASSERT_OK(target.add_trigger(HistTrigger(h).pause().trigger()));
  ASSERT_OK(target.enable());
  run_target({"getpid", "5"});
  EXPECT_EQ(hist_of(target).sections.at(0).totals.hits, 0u);

  ASSERT_OK(exec.add_trigger(tracefs::Trigger::enable_hist("syscalls", "sys_enter_getpid").filter("filename ~ \"*probe-target\"")));
  ASSERT_OK(exec.enable());
  run_target({"getpid", "5"});
  uint64_t counted = hist_of(target).sections.at(0).totals.hits;
  EXPECT_GE(counted, 6u);
  ASSERT_OK(exec.remove_trigger(tracefs::Trigger::enable_hist("syscalls", "sys_enter_getpid").filter("filename ~ \"*probe-target\"")));

  ASSERT_OK(exec.add_trigger(tracefs::Trigger::disable_hist("syscalls", "sys_enter_getpid")));
  run({"true"});
  run_target({"getpid", "5"});
  EXPECT_EQ(hist_of(target).sections.at(0).totals.hits, counted) << "disable_hist did not pause it";
}

}  // namespace
}  // namespace tracebed::suites
