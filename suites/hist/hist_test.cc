// ftracetest trigger/ hist cases in spirit: hist triggers in a fresh
// instance, their `hist` file parsed, and the probe target's entries checked
// against its events decoded from the same instance's pages and against
// what it did: the keys of .log2, .buckets, vals and filters are the sizes
// of the write(2)s it was told to make (syscalls:sys_enter_write's count).
//
// Why per pid and not the Totals: a hist counts events the buffer does not
// keep. With tracing_on=0 the kernel still runs triggers that need the
// record, through a temporary buffer (kernel/trace/trace.c
// trace_event_buffer_lock_reserve, EVENT_FILE_FL_TRIGGER_COND), so other
// tasks' events go on adding to Hits after the window closes. The probe
// target has exited by then: its entries are exact.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "suites/hist/hist_fixture.h"

namespace tracebed::suites {
namespace {

using ::testing::Pointee;

const tracefs::Feature kPercentAndGraph =
    tracefs::Feature::readme("hist .percent and .graph", ".percent    display a number of percentage value");
// Debian's 6.12 lists both modifiers in its README and refuses every
// trigger with either, hitcount.percent too.
const KnownKernelBug kPercentRefused{
    "hist .percent and .graph listed in README but refused (\"Invalid field modifier\")",
    {"Invalid field modifier"}, {7, 2}, "not seen on 7.2; Debian's 6.1 takes the same triggers"};

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

// Sizes at each power of two and either side of it, each written 3 to 6
// times: 102 writes.
std::vector<Writes> around_powers_of_two() {
  std::vector<Writes> out;
  uint64_t i = 0;
  for (uint64_t v : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 255, 256, 257, 4095, 4096, 4097})
    out.push_back({v, 3 + i++ % 4});
  return out;
}

// .log2 puts each value v in bucket ilog2(roundup_pow_of_two(v)): 2^k-1
// and 2^k share bucket k, 2^k+1 is in k+1. The write sizes the probe
// target chose, at each edge, count in the bucket the kernel's formula
// gives, every one of them (the decoded writes are the same sizes).
TEST_F(Hist, Log2KeysBucketTheDecodedValues) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = around_powers_of_two();
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key(HistField("count").log2()).filter(kOnWriteFd)},
         [&] { probe = write_work(writes); });
  EXPECT_THAT(written_sizes(decoded(ev), probe.pid), ElementsAreArray(sizes_of(writes)));
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> expected;
  for (const Writes& w : writes) expected[kernel_log2(w.size)] += w.count;
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("count");
    ASSERT_TRUE(key && key->log2) << (key ? key->text : "no count key");
    shown[*key->log2] = entry->hitcount();
  }
  EXPECT_EQ(shown, expected);
}

// .buckets=64 puts v in [v/64*64, v/64*64+63]: sizes at k*64-1, k*64 and
// k*64+1 for k = 1..4, and 0, each written 5 to 10 times (98 writes),
// count in the bucket their value is in, and each bucket spans 64.
TEST_F(Hist, BucketKeysGroupTheDecodedValues) {
  TRACEBED_REQUIRE(write_event);
  TRACEBED_REQUIRE(features::hist_buckets);
  Event ev = inst().event("syscalls", "sys_enter_write");
  std::vector<Writes> writes = {{0, 5}};
  uint64_t i = 0;
  for (uint64_t k = 1; k <= 4; ++k)
    for (uint64_t v : {k * 64 - 1, k * 64, k * 64 + 1}) writes.push_back({v, 6 + i++ % 5});
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key(HistField("count").buckets(64)).filter(kOnWriteFd)},
         [&] { probe = write_work(writes); });
  EXPECT_THAT(written_sizes(decoded(ev), probe.pid), ElementsAreArray(sizes_of(writes)));
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> expected;
  for (const Writes& w : writes) expected[w.size / 64 * 64] += w.count;
  std::map<uint64_t, uint64_t> shown;
  for (const auto& entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("count");
    ASSERT_TRUE(key && key->bucket) << (key ? key->text : "no count key");
    EXPECT_EQ(key->bucket->second, key->bucket->first + 63) << key->text;
    shown[key->bucket->first] = entry->hitcount();
  }
  EXPECT_EQ(shown, expected);
}

// vals=count sums the field per key: the sum of the sizes the probe
// target wrote, over as many hits as it wrote, each write decoded too.
TEST_F(Hist, ValuesSumTheDecodedField) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{1, 20}, {10, 20}, {100, 20}, {1000, 20}, {4096, 20}, {0, 20}, {4097, 1}};
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").val("count").filter(kOnWriteFd)}, [&] { probe = write_work(writes); });
  uint64_t sum = 0;
  for (const Writes& w : writes) sum += w.size * w.count;
  EXPECT_THAT(written_sizes(decoded(ev), probe.pid), ElementsAreArray(sizes_of(writes)));
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  EXPECT_THAT(entries_of_pid(file.sections[0], probe.pid),
              ElementsAre(Pointee(AllOf(HistValueThat("count", sum), HitCount(total_writes(writes))))));
}

// A unary minus (trace_events_hist.c parse_unary, hist_field_unary_minus)
// in a variable, neg=-(count), followed by more of the trigger, tracked by
// onmax($neg).save(count): as a u64, -(1) is the largest of the negated
// sizes the probe target wrote, so the max is 2^64 - 1 and the count
// saved with it 1. (A value expression such as vals=-(count) is counted
// but not printed.) The same writes as ValuesSumTheDecodedField.
TEST_F(Hist, UnaryMinusNegatesTheFieldItWraps) {
  TRACEBED_REQUIRE(write_event);
  TRACEBED_REQUIRE(hist_literals);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{100, 20}, {1, 20}, {10, 20}, {1000, 20}, {4096, 20}, {0, 20}, {4097, 1}};
  ProbeRun probe;
  record(ev,
         {HistTrigger()
              .key("common_pid")
              .var("neg", "-(count)")
              .action(tracefs::HistAction::onmax("neg").save({"count"}))
              .filter(kOnWriteFd)},
         [&] { probe = write_work(writes); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  auto target = entries_of_pid(file.sections[0], probe.pid);
  ASSERT_THAT(target, ElementsAre(Pointee(HitCount(total_writes(writes))))) << ev.files().read("hist").value();
  std::map<std::string, std::string> saved;
  for (const tracefs::HistValue& v : target[0]->saved) saved[v.field] = v.text;
  EXPECT_EQ(saved["max"], "18446744073709551615") << ev.files().read("hist").value();
  EXPECT_EQ(saved["count"], "1") << ev.files().read("hist").value();
}

// Division in hist expressions (trace_events_hist.c): by a field,
// hist_field_div divides (a shift only for a power of two); by a constant,
// hist_field_get_div_fn picks at parse time a shift (a power of two), a
// multiply and shift below 2^20 (div_by_mult_and_shift, whose rounding adds
// 2^20 - 1: 16/3 is 6 there, not 5) and a division above (at 2^20 and up,
// and for a divisor over 2^20: div_by_not_power_of_two). Keyed on the
// write's size, each entry's onmax of the quotient is that size's quotient,
// computed here as the kernel's source says. The sizes straddle the edges:
// count*32 reaches 2^20 at 32768 (below it the rounding is the multiply's,
// at 32770 a division's), count*65536/1048577 crosses 1 between 16 and 17,
// count/fd (fd 100) 1 and 2 at 100 and 200.
uint64_t kernel_div_by_constant(uint64_t x, uint64_t d) {
  constexpr uint64_t kShift = 20;  // HIST_DIV_SHIFT
  if (!(d & (d - 1))) return x >> __builtin_ctzll(d);
  if (d > (1u << kShift) || x >= (1u << kShift)) return x / d;
  const uint64_t mult = (uint64_t{1} << kShift) / d;
  return (x * mult + ((1u << kShift) - 1)) >> kShift;
}

TEST_F(Hist, DivisionGivesEachValueItsQuotientOnBothSidesOfTheEdges) {
  TRACEBED_REQUIRE(write_event);
  TRACEBED_REQUIRE(hist_literals);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<uint64_t> sizes = {1, 2, 3, 16, 17, 99, 100, 101, 199, 200, 32767, 32768, 32770, 65536};
  std::vector<Writes> writes;
  for (uint64_t size : sizes) writes.push_back({size, 1});
  struct Quotient {
    const char* var;
    const char* expr;
    std::function<uint64_t(uint64_t)> of;
  };
  const std::vector<Quotient> quotients = {
      {"by_field", "count/fd", [](uint64_t n) { return n / kWriteFd; }},
      {"by_three", "count*32/3", [](uint64_t n) { return kernel_div_by_constant(n * 32, 3); }},
      {"by_large", "count*65536/1048577", [](uint64_t n) { return kernel_div_by_constant(n * 65536, 1048577); }},
  };
  std::vector<HistTrigger> hists;
  for (const Quotient& q : quotients)
    hists.push_back(HistTrigger()
                        .key("count")
                        .var(q.var, q.expr)
                        .action(tracefs::HistAction::onmax(q.var).save({"fd"}))
                        .filter(kOnWriteFd));
  record(ev, hists, [&] { write_work(writes); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(quotients.size())) << ev.files().read("hist").value();
  for (const Quotient& q : quotients) {
    SCOPED_TRACE(q.expr);
    const HistSection* section = nullptr;
    for (const HistSection& s : file.sections)
      if (s.trigger_info.find(std::string(q.var) + "=" + q.expr) != std::string::npos) section = &s;
    ASSERT_NE(section, nullptr) << ev.files().read("hist").value();
    ASSERT_THAT(section->entries, SizeIs(sizes.size()));
    for (uint64_t size : sizes) {
      // onmax never fires for a quotient of 0 (not above the start): max stays 0.
      EXPECT_THAT(section->entries, Contains(AllOf(HistKeyEq("count", size), HitCount(1),
                                                   HistSavedThat("max", q.of(size)))))
          << "count " << size << " " << q.expr << " should be " << q.of(size) << "\n"
          << ev.files().read("hist").value();
    }
  }
  // The rounding is the kernel's, not arithmetic's: 16/3 is 6 below 2^20.
  EXPECT_EQ(kernel_div_by_constant(16, 3), 6u);
  EXPECT_EQ(kernel_div_by_constant(32768 * 32, 3), 349525u);
  EXPECT_EQ(kernel_div_by_constant(32770 * 32, 3), 349546u);  // 349546.67, where the multiply gives 349547
}

// keys=common_stacktrace (trace_events_hist.c event_hist_trigger: the
// stack saved where the event fired, the key's frames one per line):
// only the probe target's getpid(2)s count (its pid line's and 300), their
// entries' hitcounts add up to the records decoded, and every entry's
// stack is a system call's, through do_syscall_64.
TEST_F(Hist, StacktraceKeysCountEveryCallUnderItsStack) {
  TRACEBED_REQUIRE(getpid_event);
  const tracefs::Feature common_stacktrace =
      tracefs::Feature::readme("common_stacktrace", "can be any field, or the special string 'common_stacktrace'");
  const std::string key = features().has(common_stacktrace) ? "common_stacktrace" : "stacktrace";
  Event ev = inst().event("syscalls", "sys_enter_getpid");
  ProbeRun probe;
  record(ev, {HistTrigger().key(key)}, [&] { probe = work({"getpid", "300"}); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  uint64_t hits = 0;
  for (const tracefs::HistEntry& e : file.sections[0].entries) {
    hits += e.hitcount();
    const tracefs::HistKey* k = e.key(key);
    ASSERT_NE(k, nullptr) << "an entry without its " << key << " key";
    EXPECT_THAT(k->stack, Contains(StartsWith("do_syscall_64"))) << ::testing::PrintToString(k->stack);
  }
  // The decoded records are the independent count: the target's 301, and
  // the shell's own getpid before it execs the target, where it makes one.
  const size_t decoded_calls = of_pid(decoded(ev), probe.pid).size();
  EXPECT_GE(decoded_calls, 301u);
  EXPECT_EQ(hits, decoded_calls) << ev.files().read("hist").value();
  EXPECT_EQ(file.sections[0].totals.hits, decoded_calls);
}

// .percent and .graph (trace_events_hist.c hist_trigger_print_val, 6.3+):
// keyed on the write's size, count.percent is each key's share of the
// sum over all keys, to two decimals as the kernel's integer division
// gives it (val * 10000 / total), and count.graph a bar of 20 columns,
// as long as the value's share of the largest. Writes of 4, 5 and 8
// bytes, 25, 20 and 25 times: sums 100, 100 and 200 of 400, so 25.00 %,
// 25.00 % and 50.00 % (whole numbers, where a wrong divisor shows: 2500 /
// 101 is 24), and bars of 10, 10 and 20.
TEST_F(Hist, PercentAndGraphShowEachKeysShare) {
  TRACEBED_REQUIRE(write_event);
  TRACEBED_REQUIRE(kPercentAndGraph);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{4, 25}, {5, 20}, {8, 25}};
  for (const HistField& val : {HistField("count").percent(), HistField("count").graph()}) {
    Status added = ev.add_trigger(HistTrigger().key("count").val(val).filter(kOnWriteFd).trigger());
    if (!added) TRACEBED_SKIP_IF_KNOWN_BUG(kPercentRefused, added.error().message);
    ASSERT_OK(added);
  }
  record(ev, {}, [&] { write_work(writes); });
  HistFile file = hist_of(ev);
  const std::string text = ev.files().read("hist").value();
  ASSERT_THAT(file.sections, SizeIs(2)) << text;
  std::map<uint64_t, std::string> percent, bar;
  for (const tracefs::HistEntry& e : file.sections[0].entries) {
    const tracefs::HistValue* v = e.value("count");
    ASSERT_TRUE(e.key("count") && e.key("count")->number && v) << text;
    percent[*e.key("count")->number] = v->text;
  }
  for (const tracefs::HistEntry& e : file.sections[1].entries) {
    const tracefs::HistValue* v = e.value("count");
    ASSERT_TRUE(e.key("count") && e.key("count")->number && v) << text;
    bar[*e.key("count")->number] = v->text;
  }
  EXPECT_EQ(percent, (std::map<uint64_t, std::string>{{4, "25.00"}, {5, "25.00"}, {8, "50.00"}})) << text;
  EXPECT_EQ(bar, (std::map<uint64_t, std::string>{{4, std::string(10, '#')}, {5, std::string(10, '#')},
                                                  {8, std::string(20, '#')}}))
      << text;
}

// size=N gives the map N entries rounded up to a power of two, from 2^7
// to 2^17 (trace_events_hist.c parse_map_size, TRACING_MAP_BITS_MIN and
// _MAX): the trigger reads back with that size, and sizes on either side
// of the range are refused with EINVAL.
TEST_F(Hist, SizeIsAPowerOfTwoFrom128To131072) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<std::pair<uint32_t, uint32_t>> accepted = {{65, 128}, {128, 128}, {129, 256}, {131072, 131072}};
  for (auto [asked, got] : accepted) {
    SCOPED_TRACE(::testing::Message() << "size=" << asked);
    HistTrigger h = HistTrigger().key("common_pid").size(asked);
    ASSERT_OK(ev.add_trigger(h.trigger()));
    EXPECT_THAT(ev.files().read("trigger").value(), HasSubstr(fmt::format(":size={}", got)));
    ASSERT_OK(ev.remove_trigger(h.trigger()));
  }
  for (uint32_t refused : {1u, 64u, 131073u, 262144u}) {
    SCOPED_TRACE(::testing::Message() << "size=" << refused);
    auto err = ev.files().try_write("trigger", HistTrigger().key("common_pid").size(refused).trigger().command(),
                                    /*append=*/true);
    ASSERT_OK(err);
    EXPECT_EQ(*err, EINVAL);
  }
  EXPECT_THAT(ev.triggers().value(), IsEmpty());
}

// The trigger file reads back a hist as the kernel holds it
// (trace_events_hist.c event_hist_trigger_print): hitcount first among
// the values, the sort keys comma-separated with their modifiers, the size
// rounded up to a power of two, the filter after " if " (a tab before
// "if" separates it too), and [active].
TEST_F(Hist, TriggerReadsBackAsTheKernelHoldsIt) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  ASSERT_OK(ev.files().append("trigger", "hist:keys=common_pid,count:vals=count:sort=count.descending,common_pid:"
                                         "size=300\tif fd == 100"));
  EXPECT_EQ(ev.files().read("trigger").value(),
            "hist:keys=common_pid,count:vals=hitcount,count:sort=count.descending,common_pid:size=512 if fd == 100 "
            "[active]\n");
}

// A full map drops what it cannot hold and counts it (tracing_map.c
// tracing_map_insert, "Dropped" in the totals): 300 writes of 300
// different sizes into a map of 128 keep 128 keys hit once each and drop
// the other 172: the totals' Hits (events that found or made their key)
// and Dropped add up to the 300 the probe target made.
TEST_F(Hist, FullMapCountsWhatItDrops) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  std::vector<Writes> writes;
  for (uint64_t size = 1; size <= 300; ++size) writes.push_back({size, 1});
  record(ev, {HistTrigger().key("count").size(128).filter(kOnWriteFd)}, [&] { write_work(writes); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  const HistSection& s = file.sections[0];
  EXPECT_EQ(s.totals.hits, 128u);
  EXPECT_EQ(s.totals.entries, 128u);
  EXPECT_EQ(s.totals.dropped, 172u);
  EXPECT_THAT(s.entries, SizeIs(128));
  for (const auto& e : s.entries) EXPECT_EQ(e.hitcount(), 1u) << e.keys[0].text;
}

// A hist removed gives back what its map took (tracing_map.c
// tracing_map_destroy and tracing_map_array_free): a map of 128 entries
// is two arrays of one page each, and 128 elements with their keys and
// sums, so 1000 triggers added and removed would leak at least 8 MB if
// one page of each array stayed behind. Free memory after them is within
// 2 MB of before, once 100 rounds have warmed the slab caches (on
// debian-6.12 it was 5 MB higher after the first 1000, then steady).
TEST_F(Hist, RemovingATriggerGivesBackItsMemory) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const Trigger trigger = HistTrigger().key("common_pid").size(128).trigger();
  auto rounds = [&](int n) {
    auto r = testlib::guest().sh(
        fmt::format("t={}; i=0; while [ $i -lt {} ]; do echo '{}' >> $t && echo '{}' >> $t || exit 1; "
                    "i=$((i+1)); done; grep MemFree: /proc/meminfo",
                    ev.files().path("trigger"), n, trigger.command(), trigger.remove_command()));
    EXPECT_OK(r);
    EXPECT_TRUE(r.ok() && r->ok()) << (r.ok() ? r->err : "");
    uint64_t kb = 0;
    if (r.ok() && std::sscanf(r->out.c_str(), "MemFree: %lu kB", &kb) != 1) ADD_FAILURE() << r->out;
    return kb;
  };
  const uint64_t before = rounds(100);
  const uint64_t after = rounds(1000);
  ASSERT_GT(before, 0u);
  EXPECT_LT(before - std::min(before, after), 2048u) << "MemFree went from " << before << " kB to " << after
                                                     << " kB over 1000 hist triggers added and removed";
  EXPECT_THAT(ev.triggers().value(), IsEmpty());
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
  const std::vector<DecodedEvent> ours = of_pid(decoded(ev), probe.pid);
  const uint64_t n = ours.size();
  EXPECT_GT(n, 0u);
  // The second table, per bytes_req: its hits and its bytes_alloc sum,
  // from the decoded records.
  std::map<uint64_t, std::pair<uint64_t, uint64_t>> per_size;
  for (const DecodedEvent& e : ours) {
    auto& [hits, alloc] = per_size[static_cast<uint64_t>(int_field(e, "bytes_req"))];
    ++hits;
    alloc += static_cast<uint64_t>(int_field(e, "bytes_alloc"));
  }
  for (const HistSection& s : file.sections) {
    SCOPED_TRACE(s.trigger_info);
    uint64_t hits = 0;
    std::map<uint64_t, std::pair<uint64_t, uint64_t>> shown;
    for (const auto* entry : entries_of_pid(s, probe.pid)) {
      hits += entry->hitcount();
      if (const tracefs::HistKey* k = entry->key("bytes_req"); k && k->number) {
        const tracefs::HistValue* v = entry->value("bytes_alloc");
        shown[*k->number] = {entry->hitcount(), v && v->number ? *v->number : 0};
      }
    }
    EXPECT_EQ(hits, n);
    EXPECT_EQ(s.totals.dropped, 0u);
    if (s.trigger_info.find("bytes_req") != std::string::npos) {
      EXPECT_EQ(shown, per_size);
    }
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

// Two sort keys (tracing_map.c sort_secondary: runs of entries equal in
// the first are sorted again by the second): writes of 1 to 6 bytes, 3, 3,
// 1, 3, 2 and 2 times, keyed on the size, sort=hitcount,count.descending:
// by hitcount first, and within a hitcount the larger size first.
TEST_F(Hist, SecondSortKeyOrdersEntriesTheFirstCallsEqual) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{1, 3}, {2, 3}, {3, 1}, {4, 3}, {5, 2}, {6, 2}};
  record(ev,
         {HistTrigger().key("count").sort(HistField("hitcount")).sort(HistField("count").descending()).filter(kOnWriteFd)},
         [&] { write_work(writes); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::vector<std::pair<uint64_t, uint64_t>> order;  // (hitcount, size) as printed
  for (const auto& e : file.sections[0].entries) {
    const tracefs::HistKey* k = e.key("count");
    ASSERT_TRUE(k && k->number);
    order.emplace_back(e.hitcount(), *k->number);
  }
  EXPECT_EQ(order, (std::vector<std::pair<uint64_t, uint64_t>>{{1, 3}, {2, 6}, {2, 5}, {3, 4}, {3, 2}, {3, 1}}))
      << ev.files().read("hist").value();
}

// A filtered hist counts the matching events, every one: of writes of
// 1 to 200 bytes, `count > 100` keeps 101, 102 and 200 with the number of
// times each was written, and nothing at or below 100.
TEST_F(Hist, FilterLimitsWhatIsCounted) {
  TRACEBED_REQUIRE(write_event);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{1, 10}, {99, 11}, {100, 12}, {101, 13}, {102, 14}, {200, 15}, {100, 16}};
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").key("count").filter(kOnWriteFd + " && count > 100")},
         [&] { probe = write_work(writes); });
  EXPECT_THAT(written_sizes(decoded(ev), probe.pid), ElementsAreArray(sizes_of(writes)));
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  std::map<uint64_t, uint64_t> shown;
  for (const auto* entry : entries_of_pid(file.sections[0], probe.pid)) {
    const tracefs::HistKey* key = entry->key("count");
    ASSERT_TRUE(key && key->number) << (key ? key->text : "no count key");
    shown[*key->number] = entry->hitcount();
  }
  EXPECT_EQ(shown, (std::map<uint64_t, uint64_t>{{101, 13}, {102, 14}, {200, 15}}));
}

// pause stops counting, cont resumes, clear empties the table. The same
// run of the probe target (101 getpid calls or so, the same each time)
// counts the same before the pause and after cont, nothing while paused.
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
  auto hits_of_run = [&](int pid) {
    HistFile f = hist_of(ev);
    uint64_t n = 0;
    if (!f.sections.empty())
      for (const auto* entry : entries_of_pid(f.sections[0], pid)) n += entry->hitcount();
    return n;
  };
  const std::vector<std::string> getpids = {"getpid", "100"};
  uint64_t per_run = hits_of_run(run_target(getpids).pid);
  EXPECT_GE(per_run, 101u) << "its pid line and 100 calls";
  uint64_t before = hits();

  ASSERT_OK(ev.add_trigger(HistTrigger(h).pause().trigger()));
  int paused = run_target(getpids).pid;
  EXPECT_EQ(hits(), before) << "a paused hist kept counting";
  EXPECT_EQ(hits_of_run(paused), 0u);

  ASSERT_OK(ev.add_trigger(HistTrigger(h).cont().trigger()));
  EXPECT_EQ(hits_of_run(run_target(getpids).pid), per_run) << "the same run, counted after cont";
  EXPECT_GE(hits(), before + per_run);

  ASSERT_OK(ev.add_trigger(HistTrigger(h).clear().trigger()));
  EXPECT_THAT(hist_of(ev).sections,
              ElementsAre(AllOf(HistTotals(0, 0), ::testing::Field(&HistSection::entries, IsEmpty()))));
}

// nohitcount: the table shows only the values asked for: the pid's sum
// of the sizes it wrote, and no hitcount.
TEST_F(Hist, NohitcountHidesTheHitcount) {
  TRACEBED_REQUIRE(write_event);
  TRACEBED_REQUIRE(features::hist_nohitcount);
  Event ev = inst().event("syscalls", "sys_enter_write");
  const std::vector<Writes> writes = {{7, 30}, {300, 30}, {64, 40}};
  ProbeRun probe;
  record(ev, {HistTrigger().key("common_pid").val("count").nohitcount().filter(kOnWriteFd)},
         [&] { probe = write_work(writes); });
  HistFile file = hist_of(ev);
  ASSERT_THAT(file.sections, SizeIs(1));
  ASSERT_THAT(file.sections[0].entries, Not(IsEmpty()));
  for (const auto& entry : file.sections[0].entries) EXPECT_EQ(entry.value("hitcount"), nullptr);
  EXPECT_THAT(entries_of_pid(file.sections[0], probe.pid),
              ElementsAre(Pointee(HistValueThat("count", uint64_t{7 * 30 + 300 * 30 + 64 * 40}))));
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

// enable_hist / disable_hist start and stop another event's hist: a
// paused getpid hist counts nothing of a run; the next run's exec enables
// it, and every getpid of that run counts (as many as are decoded, 101 or
// so); after disable_hist, none of a third run does.
TEST_F(Hist, EnableHistAndDisableHistSwitchAnotherHist) {
  TRACEBED_REQUIRE(getpid_event);
  TRACEBED_REQUIRE(sched_events_exec);
  Event target = inst().event("syscalls", "sys_enter_getpid");
  Event exec = inst().event("sched", "sched_process_exec");
  HistTrigger h = HistTrigger().key("common_pid");
  auto hits_of_run = [&](int pid) {
    HistFile f = hist_of(target);
    uint64_t n = 0;
    if (!f.sections.empty())
      for (const auto* entry : entries_of_pid(f.sections[0], pid)) n += entry->hitcount();
    return n;
  };
  const std::vector<std::string> getpids = {"getpid", "100"};
  // Paused from the start: only enable_hist may make it count.
  ASSERT_OK(target.add_trigger(HistTrigger(h).pause().trigger()));
  ASSERT_OK(target.enable());
  int paused = run_target(getpids).pid;
  EXPECT_EQ(hist_of(target).sections.at(0).totals.hits, 0u);

  const Trigger enable =
      tracefs::Trigger::enable_hist("syscalls", "sys_enter_getpid").filter("filename ~ \"*probe-target\"");
  ASSERT_OK(exec.add_trigger(enable));
  ASSERT_OK(exec.enable());
  int enabled = run_target(getpids).pid;
  uint64_t counted = hist_of(target).sections.at(0).totals.hits;
  EXPECT_GE(hits_of_run(enabled), 101u) << "its pid line and 100 calls";
  ASSERT_OK(exec.remove_trigger(enable));

  ASSERT_OK(exec.add_trigger(tracefs::Trigger::disable_hist("syscalls", "sys_enter_getpid")));
  run({"true"});
  int disabled = run_target(getpids).pid;
  EXPECT_EQ(hist_of(target).sections.at(0).totals.hits, counted) << "disable_hist did not pause it";
  EXPECT_EQ(hits_of_run(disabled), 0u);
  EXPECT_EQ(hits_of_run(paused), 0u);
  // The run enabled at its exec made no getpid before it: each decoded one
  // is counted.
  EXPECT_EQ(hits_of_run(enabled), of_pid(decoded(target), enabled).size());
}

}  // namespace
}  // namespace tracebed::suites
