// Events of an instance, decoded on the host from the raw per-CPU pages
// (trace_pipe_raw) with framework/decode's page reader and the instance's
// own format files, for assertions with the matchers below.
//
//   auto events = read_events(fs(), inst(), {{"sched", "sched_switch"}});
//   EXPECT_THAT(*events, Contains(AllOf(HasEvent("sched", "sched_switch"), FieldEq("prev_pid", 0))));
//
// Reading consumes the pages. Stop tracing first (tracing_on=0) so the
// window is fixed, and read `trace` before this if both are wanted.
#pragma once

#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <variant>
#include <vector>

#include <gmock/gmock.h>

#include "framework/base/result.h"
#include "framework/tracefs/tracefs.h"

namespace tracebed::suites {

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
  // The other fields (non-char arrays, structs, odd sizes) as raw bytes.
  std::map<std::string, std::string> bytes;
};

void PrintTo(const DecodedEvent& e, std::ostream* os);

// A field's value; a missing field, or one of the other kind, is a test
// failure naming the event (and reads as 0 or "").
int64_t int_field(const DecodedEvent& e, const std::string& name);
std::string str_field(const DecodedEvent& e, const std::string& name);

// How many times `pid` was switched in (sched_switch next_pid) after a
// sched_waking of it since its previous switch in, in events sorted by
// time: the wake-ups a wakeup-latency trigger turns into events, as it
// saves the waking's stamp and the switch reads and clears it. A waking can
// find the task still on its CPU (it shows state S before it has switched
// out): that wake-up has no switch and gives no event.
size_t switch_ins_after_waking(const std::vector<DecodedEvent>& by_time, int64_t pid);

struct DecodedEvents {
  std::vector<DecodedEvent> events;  // per CPU in page order, CPUs ascending
  uint64_t unknown = 0;              // records of events not asked for (counted, not fatal)
  uint64_t missed = 0;               // events the kernel reported lost
};

// Decodes the instance's raw pages. `wanted` names the events whose formats
// to load; ftrace:print and ftrace:raw_data (markers) are always loaded.
Result<DecodedEvents> read_events(const tracefs::Tracefs& fs, const tracefs::Instance& inst,
                                  const std::vector<tracefs::EventName>& wanted);

MATCHER_P2(HasEvent, system, name,
           std::string(negation ? "is not " : "is ") + "event " + std::string(system) + ":" + std::string(name)) {
  if (arg.system == system && arg.name == name) return true;
  *result_listener << "which is " << arg.system << ":" << arg.name;
  return false;
}

MATCHER_P2(FieldEq, field, value,
           std::string(negation ? "has no" : "has") + " field " + std::string(field) + " == " +
               ::testing::PrintToString(value)) {
  auto it = arg.fields.find(field);
  if (it == arg.fields.end()) {
    *result_listener << "which has no field " << field;
    return false;
  }
  using V = std::decay_t<decltype(value)>;
  if constexpr (std::is_arithmetic_v<V>) {
    const int64_t* v = std::get_if<int64_t>(&it->second);
    if (!v) {
      *result_listener << "which is the string \"" << std::get<std::string>(it->second) << "\"";
      return false;
    }
    if (*v == static_cast<int64_t>(value)) return true;
    *result_listener << "which is " << *v;
    return false;
  } else {
    const std::string* s = std::get_if<std::string>(&it->second);
    if (!s) {
      *result_listener << "which is the number " << std::get<int64_t>(it->second);
      return false;
    }
    if (*s == std::string(value)) return true;
    *result_listener << "which is \"" << *s << "\"";
    return false;
  }
}

}  // namespace tracebed::suites
