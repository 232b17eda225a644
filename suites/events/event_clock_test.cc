// What the counter trace clock shows about the ring buffer's work. The
// "counter" clock (kernel/trace/trace_clock.c) is one tick per read, and
// the ring buffer reads it once per record it reserves (and once more when
// a reservation crosses into a new sub-buffer): its values are exact where
// a nanosecond clock's are not, and a tick skipped between two records is
// a reservation that left no record.
#include <algorithm>
#include <regex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/hist_file.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

class EventClock : public TracefsTest {
 protected:
  void SetUpTest() override { ASSERT_OK(inst().set_trace_clock("counter")); }

  // The counter values `trace` shows for the lines of `event` (the
  // counter clock prints its raw value, not seconds), in order.
  std::vector<uint64_t> text_stamps(const std::string& event) {
    const std::regex stamp("\\s([0-9]+): " + event + "\\(");
    std::vector<uint64_t> out;
    for (const std::string& l : trace_lines(inst())) {
      std::smatch m;
      if (std::regex_search(l, m, stamp)) out.push_back(std::stoull(m[1]));
    }
    return out;
  }

  // The keys of a hist on common_timestamp, sorted; each hit once (no two
  // events with one stamp).
  std::vector<uint64_t> stamp_keys(const Event& ev) {
    std::vector<uint64_t> keys;
    auto file = tracefs::read_hist(ev);
    EXPECT_OK(file);
    if (!file) return keys;
    EXPECT_THAT(file->sections, SizeIs(1));
    if (file->sections.empty()) return keys;
    for (const auto& e : file->sections[0].entries) {
      if (e.keys.size() != 1 || !e.keys[0].number) {
        ADD_FAILURE() << "not a stamp key: " << (e.keys.empty() ? "none" : e.keys[0].text);
        continue;
      }
      keys.push_back(*e.keys[0].number);
      EXPECT_EQ(e.hitcount(), 1u) << "two events with one stamp " << *e.keys[0].number;
    }
    std::sort(keys.begin(), keys.end());
    return keys;
  }
};

// The hist takes each event's stamp from the writer's side
// (ring_buffer_event_time_stamp: the stamp saved when the record was
// reserved), `trace` from the buffer: the probe target's 300 getpid(2)s
// are in both, each event's stamp in `trace` is a key of the hist, hit
// once, and the raw pages decode to the same stamps. (Kernels that turn
// the buffer to absolute stamps for such a hist write a TIME_STAMP before
// every record; 7.2 no longer does.)
TEST_F(EventClock, TraceStampsAreTheOnesAHistOnCommonTimestampSaw) {
  TRACEBED_REQUIRE(features::hist_triggers);
  TRACEBED_REQUIRE(features::sys_enter_getpid);
  Event ev = inst().event("syscalls", "sys_enter_getpid");
  // A hist with time stamps sets the instance's clock (to global unless told).
  ASSERT_OK(ev.add_trigger(HistTrigger().key("common_timestamp").clock("counter").trigger()));
  ASSERT_OK(ev.enable());
  run_target_only({"getpid", "300"});
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<uint64_t> in_text = text_stamps("sys_getpid");
  std::vector<uint64_t> keys = stamp_keys(ev);
  EXPECT_GE(in_text.size(), 300u);
  EXPECT_THAT(in_text, ElementsAreArray(keys)) << "the stamps in trace against the hist's keys";
  // The raw pages say the same: where a TIME_STAMP comes before a record,
  // the record's own delta is 0, which the kernel's reader skips but a
  // reader of the pages (libtraceevent's kbuffer, trace-cmd, this decoder)
  // adds.
  std::vector<uint64_t> in_pages;
  for (const DecodedEvent& e : decoded(ev)) in_pages.push_back(e.ts);
  EXPECT_THAT(in_pages, ElementsAreArray(in_text)) << "the stamps in the raw pages against trace";
}

// A record more than 2^27 ticks after the one before it on its CPU needs
// a TIME_EXTEND first (ring_buffer.c test_time_stamp), and the record's
// own delta is then 0: its stamp is the extend's. In a nanosecond clock,
// 12 getpid(2)s 150 ms apart are 11 such gaps; the hist's keys are the
// writer's stamps to the nanosecond, and the raw pages decode to exactly
// those. A delta left behind the extend would put every later record on
// the page a nanosecond further off.
TEST_F(EventClock, StampsAfterTimeExtendsAreTheWritersToTheNanosecond) {
  TRACEBED_REQUIRE(features::hist_triggers);
  TRACEBED_REQUIRE(features::sys_enter_getpid);
  ASSERT_OK(inst().set_trace_clock("global"));
  Event ev = inst().event("syscalls", "sys_enter_getpid");
  ASSERT_OK(ev.add_trigger(HistTrigger().key("common_timestamp").clock("global").trigger()));
  ASSERT_OK(ev.enable());
  constexpr int kCalls = 12;
  run_target_only({"getpid", std::to_string(kCalls), "150"});
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<uint64_t> keys = stamp_keys(ev);
  // The shell that execs the target makes a getpid(2) or two of its own
  // first; the target's are the last kCalls.
  ASSERT_GE(keys.size(), static_cast<size_t>(kCalls));
  for (size_t i = keys.size() - kCalls + 1; i < keys.size(); ++i)
    EXPECT_GT(keys[i] - keys[i - 1], uint64_t{1} << 27) << "the calls are a time extend apart";
  std::vector<uint64_t> in_pages;
  for (const DecodedEvent& e : decoded(ev)) in_pages.push_back(e.ts);
  EXPECT_THAT(in_pages, ElementsAreArray(keys)) << "the stamps in the raw pages against the writer's";
}

// A filtered event is built in a per-CPU buffer and copied into the ring
// buffer only when the filter matches (trace.c
// trace_event_buffer_lock_reserve, "Use temp buffer when filtering
// events"): a rejected event costs the ring buffer nothing, not a
// reservation discarded afterwards. The probe target makes 200 writes of 7
// bytes, each followed by one of 9, and the filter keeps the 7s: all 200
// are there, and their stamps run on with no more skipped ticks than new
// sub-buffers (a handful), where a reservation per rejected write would
// skip 200.
TEST_F(EventClock, EventsTheFilterRejectsNeverReachTheRingBuffer) {
  TRACEBED_REQUIRE(features::sys_enter_write);
  Event ev = inst().event("syscalls", "sys_enter_write");
  ASSERT_OK(ev.set_filter("fd == 100 && count == 7"));
  ASSERT_OK(ev.enable());
  constexpr int kPairs = 200;
  std::vector<std::string> args = {"write"};
  for (int i = 0; i < kPairs; ++i) args.insert(args.end(), {"7", "1", "9", "1"});
  ProbeRun probe = run_target_only(std::move(args));
  ASSERT_THAT(probe.lines_of("write"), SizeIs(2 * kPairs)) << "the probe target did not do every write";
  ASSERT_OK(inst().set_tracing_on(false));

  std::vector<uint64_t> stamps = text_stamps("sys_write");
  ASSERT_THAT(stamps, SizeIs(kPairs)) << "the writes the filter keeps";
  EXPECT_TRUE(std::is_sorted(stamps.begin(), stamps.end()));
  const uint64_t skipped = stamps.back() - stamps.front() - (stamps.size() - 1);
  EXPECT_LT(skipped, kPairs / 10u) << "ticks between the kept writes: the rejected ones reserved records";
}

}  // namespace
}  // namespace tracebed::suites
