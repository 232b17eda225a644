// user_events (Documentation/trace/user_events.rst): the definition string a
// program registers, the payload it writes, and user_events_status.
//
//   UserEventDef ev("test");
//   ev.u32("count").data_loc_string("msg");
//   ev.command()          -> "test u32 count; __data_loc char[] msg"
//   ev.dynamic_command()  -> "u:test u32 count; __data_loc char[] msg"
//   ev.remove_command()   -> "-:user_events/test u32 count; __data_loc char[] msg"
//   auto p = encode_user_payload(ev, {UserValue(7u), UserValue("hi")});
//
// Accepted syntax (kernel/trace/trace_events_user.c user_event_parse_cmd,
// user_event_parse_field, user_field_size):
//   name[:FLAG1[,FLAG2...]] [type name[;type name...]]
//   types: s8 s16 s32 s64 u8 u16 u32 u64 char short int, "unsigned char",
//   "unsigned short", "unsigned int", char[N] and "unsigned char[N]"
//   (0 < N <= 1024, decimal or 0x hex, at most 6 characters),
//   "__data_loc [unsigned] char[]", "__rel_loc [unsigned] char[]",
//   "struct TYPE name SIZE". `long` is refused (its size differs between
//   user and kernel); no text flag is accepted yet (EINVAL). The whole
//   string is at most 511 bytes (MAX_EVENT_DESC with its NUL).
//
// No kernel here: this file is shared with the static producer program the
// guest images carry, so it depends on nothing but the base layer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs {

inline constexpr std::string_view kUserEventsSystem = "user_events";
inline constexpr std::string_view kUserEventsMultiSystem = "user_events_multi";
// Limits from kernel/trace/trace_events_user.c.
inline constexpr size_t kUserEventMaxDesc = 512;  // MAX_EVENT_DESC, with the NUL
inline constexpr uint32_t kUserEventMaxArray = 1024;  // MAX_FIELD_ARRAY_SIZE

struct UserEventField {
  enum class Kind {
    integer,     // s8..u64, char, short, int and their unsigned forms
    char_array,  // char[N], unsigned char[N]: N bytes in place
    data_loc,    // __data_loc char[]: u32 (len << 16 | offset from the record start)
    rel_loc,     // __rel_loc char[]: u32 (len << 16 | offset from the end of this field)
    structure,   // struct TYPE name SIZE: SIZE opaque bytes
  };
  Kind kind = Kind::integer;
  std::string type;  // as the kernel keeps it: "u32", "unsigned int", "char[20]", "struct foo"
  std::string name;
  uint32_t size = 0;    // bytes in the payload
  uint32_t offset = 0;  // from the start of the payload (the kernel packs fields, no alignment)
  // The kernel's rule (user_event_parse_field): signed unless the type
  // starts with 'u'; so "char" and "struct foo" count as signed.
  bool is_signed = false;

  // "u32 count", "struct foo data 20": one field as the kernel shows it.
  std::string str() const;
  bool is_string() const { return kind == Kind::char_array || kind == Kind::data_loc || kind == Kind::rel_loc; }
};

// A user event definition: a builder that renders what the kernel accepts
// and a parser that refuses what the kernel refuses.
class UserEventDef {
 public:
  explicit UserEventDef(std::string name) : name_(std::move(name)) {}

  // Any type the kernel knows, spelled as it spells it ("unsigned int").
  UserEventDef& field(std::string_view type, std::string_view name);
  UserEventDef& u8(std::string_view n) { return field("u8", n); }
  UserEventDef& u16(std::string_view n) { return field("u16", n); }
  UserEventDef& u32(std::string_view n) { return field("u32", n); }
  UserEventDef& u64(std::string_view n) { return field("u64", n); }
  UserEventDef& s8(std::string_view n) { return field("s8", n); }
  UserEventDef& s16(std::string_view n) { return field("s16", n); }
  UserEventDef& s32(std::string_view n) { return field("s32", n); }
  UserEventDef& s64(std::string_view n) { return field("s64", n); }
  UserEventDef& char_array(std::string_view n, uint32_t len, bool is_unsigned = false);
  UserEventDef& data_loc_string(std::string_view n, bool is_unsigned = false);
  UserEventDef& rel_loc_string(std::string_view n, bool is_unsigned = false);
  UserEventDef& structure(std::string_view struct_type, std::string_view n, uint32_t size);
  // A text flag after the name ("name:FLAG"); the kernel refuses all so far.
  UserEventDef& flag(std::string_view f);

  const std::string& name() const { return name_; }
  const std::vector<UserEventField>& fields() const { return fields_; }
  const std::vector<std::string>& flags() const { return flags_; }
  const UserEventField* find(std::string_view field) const;
  // Bytes the kernel requires after the write index (user_event min_size).
  uint32_t min_size() const;

  // The name_args string for DIAG_IOCSREG: "test u32 count; char[8] tag".
  std::string command() const;
  // The line for dynamic_events: "u:" + command().
  std::string dynamic_command() const { return "u:" + command(); }
  // The dynamic_events line that deletes this event. The fields must be
  // repeated: "-:name" alone matches only an event without fields
  // (user_event_match -> user_fields_match with argc 0).
  std::string remove_command() const;
  // What the builder would make the kernel refuse, or nothing: a type it
  // does not know, a bad array size, a name with blanks, a string too long.
  std::optional<std::string> problem() const;

  // A definition as registered or as dynamic_events shows it ("u:" prefix
  // allowed); an Error says which field and why, as the kernel would refuse.
  static Result<UserEventDef> parse(std::string_view text);

 private:
  void add(UserEventField f);
  std::string name_;
  std::vector<std::string> flags_;
  std::vector<UserEventField> fields_;
  std::vector<std::string> problems_;
};

// The size of a field type as user_field_size() computes it; an Error for
// a type the kernel refuses ("long", "char[0]", "char[9999]").
Result<uint32_t> user_field_size(std::string_view type);

// ---- payloads ----

// One value to write: an integer (signed or not) or bytes (a string for
// char arrays and dynamic strings, raw bytes for struct fields).
using UserValue = std::variant<int64_t, uint64_t, std::string>;

// The payload of one write (what follows the write index), laid out as the
// kernel expects: fields packed in order, dynamic strings (with their NUL)
// after the fixed part in field order. `header_size` is the size of the
// common fields the kernel puts before the payload (struct trace_entry, 8 on
// every kernel so far; common_header_size() reads it from a format file):
// __data_loc offsets count from the record start, so they include it.
// An Error names the field whose value does not fit.
Result<std::string> encode_user_payload(const UserEventDef& def, const std::vector<UserValue>& values,
                                        uint32_t header_size = 8);

// The end of the last common_* field of an event's format file: where the
// payload of a user event starts in its record.
Result<uint32_t> common_header_size(std::string_view format_text);

// DYN_LOC (include/uapi/linux/user_events.h).
constexpr uint32_t user_dyn_loc(uint32_t offset, uint32_t size) { return size << 16 | offset; }

// ---- user_events_status ----

// One line of user_events_status (kernel/trace/trace_events_user.c
// user_seq_show): the tracepoint name and who uses it.
struct UserEventStatusEntry {
  std::string name;  // "test", or "test.1a" for a multi-format event
  bool ftrace = false, perf = false, other = false;
  bool busy() const { return ftrace || perf || other; }
};

struct UserEventsStatus {
  std::vector<UserEventStatusEntry> events;
  uint64_t active = 0;  // "Active: N": registered events
  uint64_t busy = 0;    // "Busy: N": events something is attached to
  const UserEventStatusEntry* find(std::string_view name) const;
};

// Parses the text form: one "name[ # Used by ftrace perf other]" line per
// event, a blank line, "Active: N", "Busy: N".
Result<UserEventsStatus> parse_user_events_status(std::string_view text,
                                                  std::string_view file = "user_events_status");

// The tracepoint names a multi-format registration of `name` can have:
// "name.<hex id>" (user_event_set_tp_name), as the documentation's
// "^name\.[0-9a-fA-F]+$".
bool is_multi_format_name(std::string_view tp_name, std::string_view name);

}  // namespace tracebed::tracefs
