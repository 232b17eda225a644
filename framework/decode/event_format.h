// Event format descriptions: what events/<system>/<event>/format says.
//
// A format file lists the fields of one event (name, C type, offset, size,
// signedness) and the `print fmt` the kernel would use to print it. See the
// kernel's Documentation/trace/events.rst and kernel/trace/trace_events.c
// (`f_show`), which writes these files.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/result.h"

namespace tracebed::decode {

class PrintFmt;

enum FieldFlag : uint32_t {
  kFieldSigned = 1u << 0,
  kFieldArray = 1u << 1,     // static array: `type name[N]`
  kFieldDataLoc = 1u << 2,   // `__data_loc`: u32 = len << 16 | offset from record start
  kFieldRelLoc = 1u << 3,    // `__rel_loc`: offset counts from the end of this field
  kFieldPointer = 1u << 4,   // type ends in `*`
  kFieldString = 1u << 5,    // char array or dynamic char[]
  kFieldLong = 1u << 6,      // type is long/unsigned long (size depends on the kernel)
  kFieldCommon = 1u << 7,    // common_* fields
};

struct Field {
  std::string name;
  std::string type;          // as written in the format file, e.g. "__data_loc char[]"
  uint32_t offset = 0;
  uint32_t size = 0;         // whole field; for arrays the whole array
  uint32_t flags = 0;
  uint32_t array_len = 0;    // N for `[N]`, 0 otherwise
  uint32_t elem_size = 0;    // size of one element (== size for scalars)
  // Set once `report -R` printed this string field as ARRAY[..] because its
  // bytes were not printable; libtraceevent then keeps doing so.
  mutable bool raw_not_string = false;

  bool has(FieldFlag f) const { return (flags & f) != 0; }

  // Integer value of a scalar field (1/2/4/8 bytes), zero-extended; 0 when the
  // record is too short. Use read_int for sign extension.
  // Inline: plugins and print fmts read a few fields of every record.
  uint64_t read_uint(Bytes record, Endian e) const {
    if (size_t(offset) + size > record.size()) return 0;
    return load_uint(record.data() + offset, size, e);
  }
  int64_t read_int(Bytes record, Endian e) const {
    const uint64_t v = read_uint(record, e);
    switch (size) {
      case 1: return static_cast<int8_t>(v);
      case 2: return static_cast<int16_t>(v);
      case 4: return static_cast<int32_t>(v);
      default: return static_cast<int64_t>(v);
    }
  }
  // Payload of a __data_loc/__rel_loc field, or the bytes of a static array;
  // empty when the location points outside the record.
  Bytes payload(Bytes record, Endian e) const;
  // Text of a char array or dynamic string, up to the first NUL.
  std::string_view read_string(Bytes record, Endian e) const;
};

struct EventFormat {
  uint32_t id = 0;
  std::string system;
  std::string name;
  std::vector<Field> fields;   // common fields first, in file order
  size_t common_count = 0;     // how many of `fields` are common_*
  std::string print_fmt;       // text after "print fmt: "
  bool has_print_fmt = false;  // false when the file had no `print fmt:` line

  // print_fmt parsed on first use, on whichever thread asks first: a
  // recording keeps every format of the kernel (thousands with `-e all`)
  // and a report prints a few of them. Null if it did not parse. Inline:
  // a report asks once per record.
  const PrintFmt* printer() const {
    if (!print_fmt_parsed_.load(std::memory_order_acquire)) parse_print_fmt();
    return printer_.get();
  }
  // Why it did not parse (shown instead of the fields); empty if it did.
  const std::string& print_fmt_error() const {
    if (!print_fmt_parsed_.load(std::memory_order_acquire)) parse_print_fmt();
    return print_fmt_error_;
  }

  const Field* field(std::string_view name) const;

 private:
  void parse_print_fmt() const;
  mutable std::atomic<bool> print_fmt_parsed_{false};
  mutable std::mutex print_fmt_mu_;
  mutable std::shared_ptr<const PrintFmt> printer_;
  mutable std::string print_fmt_error_;
};

// Parses the text of an events/<system>/<name>/format file (or one of the
// ftrace formats trace.dat stores). `origin` names the source in errors.
Result<std::unique_ptr<EventFormat>> parse_event_format(std::string_view text, std::string_view system,
                                                        std::string_view origin);

// The name and ID a format file's head gives ("name: X", "ID: N", then
// "format:"), read the way parse_event_format reads them, without the
// fields; false when the head has any other shape.
struct EventFormatHead {
  std::string_view name;
  uint32_t id = 0;
};
bool peek_event_format(std::string_view text, EventFormatHead& head);

// header_page: the layout of a ring-buffer sub-buffer header.
struct HeaderPage {
  uint32_t timestamp_offset = 0, timestamp_size = 8;
  uint32_t commit_offset = 8, commit_size = 8;  // commit is a kernel `long`
  uint32_t data_offset = 16;
  uint32_t data_size = 4080;                    // page size minus header, as the kernel says
};
Result<HeaderPage> parse_header_page(std::string_view text, std::string_view origin);

}  // namespace tracebed::decode
