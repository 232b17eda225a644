// One decoded ring-buffer event, as a view into the bytes it came from.
#pragma once

#include <cstdint>
#include <limits>

#include "framework/base/bytes.h"

namespace tracebed::decode {

struct EventFormat;

// Record::missed_events when the sub-buffer said events were lost but did
// not store how many (commit bit 31 without bit 30).
inline constexpr uint64_t kMissedUnknown = std::numeric_limits<uint64_t>::max();

struct Record {
  uint64_t ts = 0;            // ns: page stamp + deltas (+ the file's offset)
  Bytes data;                 // payload, common fields first; valid until the stream advances
  int32_t cpu = 0;
  uint16_t buffer = 0;        // 0 = top-level buffer, else index into the file's instances
  // Events lost just before this one, as the kernel reported on the
  // sub-buffer this record opens (0 = none, kMissedUnknown = lost, count not stored).
  uint64_t missed_events = 0;
  // With missed_events set: the sub-buffer had a time extend, absolute stamp
  // or padding before this record. libtraceevent's kbuffer (trace-cmd 3.1.6)
  // reports missed events only for an event at data offset 0, so
  // `trace-cmd report` shows no count for such a record.
  bool missed_not_at_data_start = false;
  uint64_t offset = 0;        // offset of the event header in the CPU's data, for errors
  // The sub-buffer bytes `data` lies in, when the reader sets it (empty
  // otherwise). libtraceevent prints a short record's fixed arrays (the
  // kernel stores only `size` of kernel_stack's caller[8]) with the bytes
  // that follow it in the page; -R output reads them from here to match.
  Bytes sub_buffer;
  // Its event's format, looked up once by the stream that made the record
  // (TraceContext::event_of): null for an id without a format, or from a
  // source that does not look formats up.
  const EventFormat* event = nullptr;
};

}  // namespace tracebed::decode
