// Values for tracebed_events' emit file across each field's range, and the
// text libtraceevent (`trace-cmd report`) makes of each record with the
// event's print fmt (vmimages/modules/tracebed_events/tracebed_events_trace.h),
// spelled out from the values written (event_text.h), not from any decoder.
// Where libtraceevent 1.7.1 prints differently from the kernel's `trace`:
//   - %d of an s8 or s16 field: the field is read unsigned, so -1 prints
//     255 and 65535 (s32 and s64 print signed);
//   - tb_arrays: it cannot parse __print_array(..., sizeof(u32)) and prints
//     "[FAILED TO PARSE]" and each field, arrays as "ARRAY[de, ad]" (the
//     values keep the first byte of `bytes` unprintable, see arrays());
//   - __get_cpumask: the set CPUs as ranges ("0-1"), as print_cpumask_to_seq
//     does, where the kernel prints hex words;
//   - __print_symbolic of an int field: the field is read unsigned and never
//     sign-extended, so -1 does not match the symbol { -1, "DEAD" } and
//     prints 0xffffffff, where the kernel prints DEAD (and -2 as
//     0xfffffffe, where the kernel prints 0xfffffffffffffffe).
#pragma once

#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

namespace tracebed::suites {

// Records each emit case writes: enough that a dropped last record, or one
// record in a hundred lost or doubled, shows.
inline constexpr int kRecords = 200;

// The suite's one random source, seeded: a failure reproduces.
std::mt19937_64& rng();

// A value of T: its limits, 0 and -1 first of every 50, then random.
template <typename T>
T value_of(int i) {
  switch (i % 50) {
    case 0:
      return std::numeric_limits<T>::min();
    case 1:
      return std::numeric_limits<T>::max();
    case 2:
      return 0;
    case 3:
      return static_cast<T>(-1);
    default:
      return static_cast<T>(rng()());
  }
}

// tb_ints' values of record i: every width's limits, 0 and -1, then random
// (the signed fields one step behind the unsigned), and its emit line.
struct IntsRecord {
  uint8_t u8;
  int8_t s8;
  uint16_t u16;
  int16_t s16;
  uint32_t u32;
  int32_t s32;
  uint64_t u64;
  int64_t s64;
};
IntsRecord ints_record(int i);
std::string ints_line(int seq, const IntsRecord& v);

// One event's records: the emit lines (seq 0..n-1) and each record's text
// after "<event>: ", by seq.
struct EmitCase {
  std::string event;
  std::string lines;
  std::vector<std::string> text;
};

// `records` records of every tracebed event (tb_ints, tb_arrays,
// tb_strings, tb_masks, tb_flags). The module sets only CPUs below
// nr_cpu_ids (`ncpus`) in a cpumask. Every mask prints its own value (as
// from the raw record; `trace` on 7.2 does not, see ModulesEvents).
std::vector<EmitCase> every_event_case(int records, int ncpus);

}  // namespace tracebed::suites
