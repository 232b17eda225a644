// Events of an instance, decoded on the host from the raw per-CPU pages
// (trace_pipe_raw) with framework/decode's page reader and the instance's
// own format files, for assertions with the matchers of matchers.h.
// In a TracefsTest, decoded() is the short way (it stops tracing, checks
// that nothing was lost and sorts by time); read_events() is the whole
// result, for another Tracefs or the counts of unknown and lost records.
//
//   auto events = read_events(fs(), inst(), {{"sched", "sched_switch"}});
//   EXPECT_THAT(events->events, Contains(HasEvent("sched/sched_switch", FieldEq("prev_pid", 0))));
//   EXPECT_THAT(int_fields(events->events, "prev_pid"), Contains(0));
//
// Reading consumes the pages. Stop tracing first (tracing_on=0) so the
// window is fixed, and read `trace` before this if both are wanted.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::testlib {

struct DecodedEvent {
  std::string system;
  std::string name;
  uint64_t ts = 0;  // raw trace clock, as the page says
  int cpu = 0;
  int pid = 0;
  std::string comm;  // from saved_cmdlines; "<...>" when unknown, as trace prints
  // Scalars as integers, char arrays and dynamic strings as text; other
  // fields are in `bytes`.
  std::map<std::string, std::variant<int64_t, std::string>> fields;
  // The other fields (non-char arrays, structs, odd sizes) as raw bytes;
  // u8 and s8 arrays are here too, whole, besides their text in `fields`.
  std::map<std::string, std::string> bytes;
};

void PrintTo(const DecodedEvent& e, std::ostream* os);

// A field's value; a missing field, or one of the other kind, is a test
// failure naming the event (and reads as 0 or "").
int64_t int_field(const DecodedEvent& e, const std::string& name);
std::string str_field(const DecodedEvent& e, const std::string& name);

// One field of every event, in order (a missing one fails as int_field
// and str_field do): EXPECT_THAT(int_fields(events, "ret"), ElementsAre(3, -2)).
std::vector<int64_t> int_fields(const std::vector<DecodedEvent>& events, const std::string& name);
std::vector<std::string> str_fields(const std::vector<DecodedEvent>& events, const std::string& name);

// The events of one task, or of one event name ("p1", or "kprobes/p1").
std::vector<DecodedEvent> of_pid(const std::vector<DecodedEvent>& events, int pid);
std::vector<DecodedEvent> named(const std::vector<DecodedEvent>& events, std::string_view name);
// Whether e is "name" or "system/name" ("system:name" too).
bool is_event(const DecodedEvent& e, std::string_view name);

// How many times `pid` was switched in (sched_switch next_pid) after a
// sched_waking of it since its previous switch in, in events sorted by
// time: the wake-ups a wakeup-latency trigger turns into events, as it
// saves the waking's stamp and the switch reads and clears it. A waking can
// find the task still on its CPU (it shows state S before it has switched
// out): that wake-up has no switch and gives no event.
size_t switch_ins_after_waking(const std::vector<DecodedEvent>& by_time, int64_t pid);

// Each record of `probe` with the record of `source` it was made from: an
// eprobe or a tprobe on `source` fires from the same tracepoint call, so
// on its CPU its record follows the source's. In page order (per CPU),
// each `probe` record is paired with the last `source` record before it on
// its CPU, used once; nullptr when there is none.
struct Probed {
  const DecodedEvent* source = nullptr;
  const DecodedEvent* probe = nullptr;
};
std::vector<Probed> probed_from(const std::vector<DecodedEvent>& by_page, std::string_view source,
                                std::string_view probe);

// The `source` records no `probe` record follows on their CPU (in page
// order), but for a CPU's last record of the two: tracing stopped between
// one tracepoint call's two writes leaves that one alone. A probe that
// misses calls of its event shows here; probed_from only sees the records
// it made.
std::vector<const DecodedEvent*> unprobed_sources(const std::vector<DecodedEvent>& by_page, std::string_view source,
                                                  std::string_view probe);

struct DecodedEvents {
  std::vector<DecodedEvent> events;  // per CPU in page order, CPUs ascending
  uint64_t unknown = 0;              // records of events not asked for (counted, not fatal)
  uint64_t missed = 0;               // events the kernel reported lost (a page that lost
                                     // an uncounted number adds 1)
};

// Decodes the instance's raw pages. `wanted` names the events whose formats
// to load; ftrace:print and ftrace:raw_data (markers) are always loaded.
Result<DecodedEvents> read_events(const tracefs::Tracefs& fs, const tracefs::Instance& inst,
                                  const std::vector<tracefs::EventName>& wanted);

}  // namespace tracebed::testlib
