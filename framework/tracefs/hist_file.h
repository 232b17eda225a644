// An event's `hist` file parsed (kernel/trace/trace_events_hist.c
// hist_show): each hist trigger's section with its trigger read back, its
// entries typed by their keys' modifiers, the actions' saved values and
// snapshots, and the Totals.
//
//   auto file = read_hist(ev);
//   for (const HistEntry& e : file->sections[0].entries) e.key("common_pid")->number;
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/base/result.h"
#include "framework/tracefs/hist.h"

namespace tracebed::tracefs {

class Event;

// One key of an entry, typed by the modifier the trigger gave it
// (kernel/trace/trace_events_hist.c hist_trigger_print_key).
struct HistKey {
  std::string field;  // as printed: "common_pid", "id", "call_site"
  std::string text;   // as printed, trimmed: "bash            [      1234]"
  // The number: a plain key, the pid of .execname, the id of .syscall, the
  // address of .sym/.sym-offset, a .hex value.
  std::optional<uint64_t> number;
  std::string symbol;  // .execname comm, .syscall name, .sym(-offset) "kmalloc+0x12/0x40"
  std::optional<uint32_t> log2;  // .log2: "~ 2^5" -> 5
  std::optional<std::pair<uint64_t, uint64_t>> bucket;  // .buckets=N: "~ 64-127"
  std::vector<std::string> stack;  // stacktrace keys: one frame per line
};

// One value: "hitcount:  12", "bytes_req:  2048", "hitcount (%):  12.50",
// or the action lines of onmax/onchange ("max:  373  next_comm: sleep").
struct HistValue {
  std::string field;
  std::string text;  // as printed, trimmed
  std::optional<uint64_t> number;
  std::optional<double> percent;  // .percent
};

struct HistEntry {
  std::vector<HistKey> keys;
  std::vector<HistValue> values;
  // Saved by onmax/onchange actions, the tab-indented lines after the entry.
  std::vector<HistValue> saved;

  const HistKey* key(std::string_view field) const;
  const HistValue* value(std::string_view field) const;
  uint64_t hitcount() const;  // 0 when not shown (nohitcount)
};

struct HistTotals {
  uint64_t hits = 0, entries = 0, dropped = 0;
};

// One "# event histogram" section: one hist trigger's table.
// What an onmax()/onchange() .snapshot() action took, printed before the
// Totals once it fired (kernel/trace/trace_events_hist.c
// track_data_snapshot_print):
//   Snapshot taken (see tracing/snapshot).  Details:
//   \ttriggering value { onchange($newprio) }:        121\ttriggered by event with key: { comm: ping }
struct HistSnapshot {
  std::string handler;  // "onchange($newprio)"
  uint64_t value = 0;   // the tracked value that took it
  std::string key;      // the entry's key as printed: "{ comm: ping }"
};

struct HistSection {
  std::string trigger_info;  // the "# trigger info: " line's spec
  HistTrigger trigger;       // trigger_info parsed
  std::vector<HistEntry> entries;
  HistTotals totals;
  std::optional<HistSnapshot> snapshot;
};

struct HistFile {
  std::vector<HistSection> sections;  // one per hist trigger on the event
};

// Parses the text of events/<sys>/<event>/hist.
Result<HistFile> parse_hist_file(std::string_view text);
// Reads and parses an event's hist file.
Result<HistFile> read_hist(const Event& ev);

}  // namespace tracebed::tracefs
