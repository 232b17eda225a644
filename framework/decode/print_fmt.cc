// A print-fmt evaluator with the semantics of libtraceevent 1.7.1
// (src/event-parse.c), because trace-cmd report prints every event through it
// and our output must match byte for byte. That means reproducing its quirks
// on purpose (each checked against Debian's libtraceevent 1.7.1):
//  - field values are read zero-extended; printf's cast does the sign;
//  - casts only mask (`(int)x` is x & 0xffffffff, never sign-extended);
//  - operator precedence comes from its rotate-on-priority parser, so a
//    parenthesised right operand can re-associate (`a * (b + 1)` is a*b + 1);
//  - `^` parses but evaluates to 0; `__get_dynamic_array(x)[i]` fails;
//  - %c and the '+' / ' ' flags are printed as ">c<", ">+<", "> <" and bind
//    no argument; a character constant 'A' is the text "A" (0 as a number);
//  - sizeof knows int, long, long long, unsigned and REC->field only;
//  - __print_array prints decimal, space-separated, in host byte order;
//  - %s of a long-sized scalar prints a printk string or bare hex;
//  - bprint: arguments are unpacked the way make_bprint_args walks the
//    format, and a conversion left without one fails the event for good.
// Where libtraceevent reads past a record (lengths beyond the data) we stop
// at the record's end instead. Parsing happens once per event; format()
// only appends to `out`. print_fmt_internal.h maps the files that do each
// part; this one is the API and `trace-cmd report -R`'s raw fields.
#include "framework/decode/print_fmt.h"

#include <fmt/format.h>

#include "framework/decode/print_fmt_internal.h"
#include "framework/decode/print_fmt_lexer.h"

namespace tracebed::decode {

using namespace std::string_view_literals;
using namespace print_fmt;

namespace {

class PrintFmtImpl final : public PrintFmt {
 public:
  std::string format_text;
  std::vector<NodePtr> args;
  SegmentList segments;
  bool bprint = false;
  mutable BprintCache bprint_cache;
  mutable bool bprint_failed = false;

  void format(const Record& record, const EventFormat& event, const TraceContext& ctx,
              TextOut& out) const override;
  bool keeps_state() const override { return bprint; }
  void raw_fields(const Record& record, const EventFormat& event, const TraceContext& ctx,
                  TextOut& out) const;
};

void PrintFmtImpl::format(const Record& record, const EventFormat& event, const TraceContext& ctx,
                          TextOut& out) const {
  if (bprint) {
    print_bprint(record, event, ctx, out, bprint_cache, bprint_failed);
    return;
  }
  Eval{record.data, event, ctx, ctx.endian}.segments(out, segments, args);
}

bool is_printable_array(const uint8_t* p, size_t len) {
  for (size_t i = 0; i < len && p[i]; i++)
    if (!c_isprint(p[i]) && !c_isspace(p[i])) return false;
  return true;
}

// The record's bytes followed by the rest of its sub-buffer, when known:
// libtraceevent prints a fixed array of a short record with what follows it.
Bytes widened(const Record& record) {
  const uint8_t* b = record.sub_buffer.data();
  const uint8_t* e = b + record.sub_buffer.size();
  const uint8_t* d = record.data.data();
  if (!b || !d || d < b || d + record.data.size() > e) return record.data;
  return Bytes(d, static_cast<size_t>(e - d));
}

// print_field_raw. A string field whose bytes once were not printable
// prints as ARRAY[...] from then on: libtraceevent clears its string flag.
void field_raw(TextOut& out, const Eval& ev, const Field& f, Bytes wide) {
  Bytes data = ev.data;
  if (f.has(kFieldArray)) {
    uint32_t off, len;
    if (f.has(kFieldDataLoc)) {
      ev.dynamic_offset(f, off, len);
    } else {
      off = f.offset;
      len = f.size;
      if (size_t(off) + len > data.size()) data = wide;
    }
    if (off > data.size()) return;
    size_t avail = std::min<size_t>(len, data.size() - off);
    const uint8_t* p = data.data() + off;
    if (f.has(kFieldString) && !f.raw_not_string && is_printable_array(p, avail)) {
      out.append(reinterpret_cast<const char*>(p), text_len(p, data.size() - off));
    } else {
      out += "ARRAY["sv;
      for (size_t i = 0; i < avail; i++) {
        if (i) out += ", "sv;
        append_hex(out, p[i], 2);
      }
      out += ']';
      f.raw_not_string = true;
    }
    return;
  }
  uint64_t val = ev.read_number(f.offset, f.size);
  // The printf conversions of libtraceevent's print_field_raw, by hand:
  // `report -R` prints every field of every record this way.
  if (f.has(kFieldPointer)) {
    out += "0x"sv;
    append_hex(out, val);
  } else if (f.has(kFieldSigned)) {
    switch (f.size) {
      case 4:
        if (f.has(kFieldLong)) {
          out += "0x"sv;
          append_hex(out, static_cast<uint32_t>(val));  // "%x" of an int
        } else {
          append_int(out, static_cast<int32_t>(val));
        }
        break;
      case 2: append_int(out, static_cast<int16_t>(val), 2); break;
      case 1: append_int(out, static_cast<int8_t>(val), 1); break;
      default: append_int(out, static_cast<int64_t>(val)); break;
    }
  } else if (f.has(kFieldLong)) {
    out += "0x"sv;
    append_hex(out, val);
  } else {
    append_uint(out, val);
  }
}

void PrintFmtImpl::raw_fields(const Record& record, const EventFormat& event, const TraceContext& ctx,
                              TextOut& out) const {
  Eval ev{record.data, event, ctx, ctx.endian};
  const auto& segs = segments.segs;
  // print_selected_fields walks the print fmt's conversions alongside the
  // fields; after the last conversion the cursor is null and the remaining
  // fields print by type.
  long cursor = segs.empty() ? -1 : 0;
  for (size_t i = event.common_count; i < event.fields.size(); ++i) {
    const Field& f = event.fields[i];
    out += ' ';
    out += f.name;
    out += '=';
    bool done = false;
    if (cursor >= 0 && !segments.failed && !bprint && !f.has(kFieldArray) && !f.has(kFieldString)) {
      long start = cursor, p = cursor;
      bool has_0x = false;
      do {
        const Segment& s = segs[p];
        if (s.type == SegType::text) {
          has_0x = s.format.size() > 1 && s.format.compare(s.format.size() - 2, 2, "0x") == 0;
        } else {
          const Node* a = args[s.arg].get();
          while (a && a->kind == K::type) a = a->left.get();
          if (a && a->kind == K::field && a->field == static_cast<int>(i)) {
            if (has_0x) out += "0x"sv;
            ev.segment(out, s, args);
            cursor = p + 1 < static_cast<long>(segs.size()) ? p + 1 : -1;
            done = true;
            break;
          }
          has_0x = false;
        }
        p = p + 1 < static_cast<long>(segs.size()) ? p + 1 : 0;
      } while (p != start);
    }
    if (done) continue;
    field_raw(out, ev, f, widened(record));
  }
}

}  // namespace

Result<std::unique_ptr<PrintFmt>> PrintFmt::parse(std::string_view text, const EventFormat& event) {
  auto impl = std::make_unique<PrintFmtImpl>();
  impl->bprint = event.system == "ftrace" && event.name == "bprint";
  // Trailing newlines would read as an extra (empty) argument.
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
  Status st = parse_print_args(text, event, impl->format_text, impl->args);
  if (!st.ok()) return Error{fmt::format("{}: {}", event.name, st.error().message)};
  if (impl->args.empty() && event.system == "ftrace") {
    // Old ftrace formats had no arguments: print the fields in order.
    for (size_t i = event.common_count; i < event.fields.size(); ++i) {
      auto n = std::make_unique<Node>();
      n->kind = K::field;
      n->field = static_cast<int>(i);
      n->text = event.fields[i].name;
      impl->args.push_back(std::move(n));
    }
  }
  if (!impl->bprint) {
    impl->segments = build_segments(impl->format_text, static_cast<int>(impl->args.size()));
    if (impl->segments.failed) return Error{fmt::format("{}: {}", event.name, impl->segments.why)};
  }
  return std::unique_ptr<PrintFmt>(std::move(impl));
}

void format_raw_fields(const Record& record, const EventFormat& event, const TraceContext& ctx,
                       TextOut& out) {
  if (auto* impl = dynamic_cast<const PrintFmtImpl*>(event.printer())) {
    impl->raw_fields(record, event, ctx, out);
    return;
  }
  Eval ev{record.data, event, ctx, ctx.endian};
  for (size_t i = event.common_count; i < event.fields.size(); ++i) {
    out += ' ';
    out += event.fields[i].name;
    out += '=';
    field_raw(out, ev, event.fields[i], widened(record));
  }
}

}  // namespace tracebed::decode
