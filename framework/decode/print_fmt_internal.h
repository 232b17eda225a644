// What the print-fmt files share, private to them (print_fmt.h is the API):
// the parsed tree, the format split into segments, the evaluator and the
// bprint cache. The semantics are libtraceevent 1.7.1's (src/event-parse.c);
// print_fmt.cc lists the quirks kept on purpose.
//
//   print_fmt_lexer.cc     tokens
//   print_fmt_parser.cc    the arguments after the format, into a Node tree
//   print_fmt_segments.cc  the format string, into text and conversions
//   print_fmt_eval.cc      a record's values and strings through the tree
//   print_fmt_pointer.cc   the %p conversions (symbols, MAC, IP, UUID, hex)
//   print_fmt_bprint.cc    ftrace:bprint, whose format is in the record
//   print_fmt.cc           PrintFmt: parse once, format each record, -R fields
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"
#include "framework/decode/record.h"
#include "framework/decode/report_text.h"
#include "framework/decode/text_out.h"
#include "framework/decode/trace_context.h"

namespace tracebed::decode::print_fmt {

// ----------------------------------------------------------------- tree ----

// Argument kinds in libtraceevent's enum tep_print_arg_type order: the
// number shows up in its "ARG TYPE NOT FIELD BUT %d" messages.
enum class K : uint8_t {
  null = 0, atom, field, flags, symbol, hex, int_array, type, string, bstring, op, func,
  bitmask, dyn_array, dyn_array_len, hex_str, cpumask,
};

struct FlagSym {
  long long value;  // libtraceevent's eval_flag of the value text
  std::string str;
};

// A value a print fmt computes once, on first use. The report's writer
// thread and its reading thread may both evaluate a print fmt (more than
// two CPUs): each computes the same value, so two at once only repeat the
// work, and the atomics keep that defined.
struct LazyValue {
  mutable std::atomic<bool> known{false};
  mutable std::atomic<uint64_t> value{0};

  LazyValue() = default;
  LazyValue(const LazyValue& o) : known(o.known.load()), value(o.value.load()) {}
  LazyValue& operator=(const LazyValue& o) {
    value = o.value.load();
    known = o.known.load();
    return *this;
  }
  template <class Compute>
  uint64_t get(Compute compute) const {
    if (known.load(std::memory_order_acquire)) return value.load(std::memory_order_relaxed);
    const uint64_t v = compute();
    value.store(v, std::memory_order_relaxed);
    known.store(true, std::memory_order_release);
    return v;
  }
};

struct Node {
  K kind = K::null;
  std::string text;  // atom / op / cast type / flags delimiter / field name
  int field = -1;    // index into EventFormat::fields
  int prio = 0;
  bool has_delim = false;
  std::unique_ptr<Node> left, right, third;
  std::vector<FlagSym> syms;
  std::vector<std::unique_ptr<Node>> args;  // arguments of a helper function
  // Atoms: strtoull of the text; a non-numeric atom in a numeric context is
  // looked up once as a kernel symbol (libtraceevent test_for_symbol).
  uint64_t number = 0;
  LazyValue symbol;
  // K::type: eval_type_str only masks, so its mask is the cast of all ones.
  LazyValue cast_mask;
};
using NodePtr = std::unique_ptr<Node>;

inline uint64_t c_strtoull(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 0); }
inline long long c_strtoll(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 0); }

// libtraceevent eval_type_str: casts mask, they never sign-extend.
uint64_t eval_type_str(uint64_t val, std::string_view type, bool pointer);

// Parses `"format", args...` (or `print fmt: "format", args...`) of `event`:
// the format string into `format`, each argument into a tree in `args`.
Status parse_print_args(std::string_view text, const EventFormat& event, std::string& format,
                        std::vector<NodePtr>& args);

// ------------------------------------------------------- format segments ----

enum class SegType : uint8_t { text, digit, pointer, string };

struct Segment {
  SegType type = SegType::text;
  std::string format;  // printf format (or literal text)
  int arg = -1;        // index of the argument
  int len_arg = -1;    // index of the `*` argument
  int ls = 0;          // length modifier: -2 hh, -1 h, 0, 1 l, 2 ll
  // digit segments printf would print as "%[0-][width][hh|h|l|ll|z|L](d|i|u|x|X|o)":
  // the conversion, printed without snprintf (most fields of most events).
  char fast_conv = 0;
  bool fast_zero = false, fast_left = false;
  uint8_t fast_width = 0;
};

struct SegmentList {
  std::vector<Segment> segs;
  bool failed = false;
  std::string why;
};

// libtraceevent parse_args: splits the format into literal text and
// conversions, binding `nargs` arguments in order. A conversion without an
// argument marks the list failed and, as there, leaves its letter to be
// printed as text.
SegmentList build_segments(const std::string& fmt, int nargs);

// printf of a digit segment with fast_conv set: `val` cast to the length
// modifier's type as Eval::number passes it, then printed.
inline void append_fast_number(TextOut& out, const Segment& s, uint64_t val) {
  char buf[24];
  char* const end = buf + sizeof buf;
  char* p;
  bool negative = false;
  const int bytes = s.ls <= -2 ? 1 : s.ls == -1 ? 2 : s.ls == 0 ? 4 : 8;
  if (s.fast_conv == 'd' || s.fast_conv == 'i') {
    int64_t v = bytes == 1 ? static_cast<int8_t>(val) : bytes == 2 ? static_cast<int16_t>(val)
              : bytes == 4 ? static_cast<int32_t>(val) : static_cast<int64_t>(val);
    negative = v < 0;
    p = format_decimal(negative ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v), end);
  } else {
    const uint64_t v = bytes == 8 ? val : val & ((uint64_t{1} << (bytes * 8)) - 1);
    if (s.fast_conv == 'u') {
      p = format_decimal(v, end);
    } else if (s.fast_conv != 'o') {  // x, X
      hex16_digits(v, end - 16, s.fast_conv == 'X');
      p = end - hex_digit_count(v);
    } else {  // "mode: 0%03o" of open and friends
      p = end;
      uint64_t x = v;
      do {
        *--p = static_cast<char>('0' + (x & 7));
        x >>= 3;
      } while (x);
    }
  }
  const size_t n = static_cast<size_t>(end - p) + (negative ? 1 : 0);
  const size_t pad = s.fast_width > n ? s.fast_width - n : 0;
  if (pad && !s.fast_left && !s.fast_zero) out.append(pad, ' ');
  if (negative) out += '-';
  if (pad && s.fast_zero) out.append(pad, '0');
  out.append(p, static_cast<size_t>(end - p));
  if (pad && s.fast_left) out.append(pad, ' ');
}

// ------------------------------------------------------------- evaluator ----

// strnlen that accepts the null pointer of an empty span.
inline size_t text_len(const void* s, size_t max) {
  return s && max ? strnlen(static_cast<const char*>(s), max) : 0;
}

// The widest field and the longest precision the kernel's vsnprintf prints
// (lib/vsprintf.c FIELD_WIDTH_MAX, PRECISION_MAX): no event of a real
// kernel asks for more, and a format file or a record's `*` width that does
// is held to it, as the kernel would, instead of making one record gigabytes
// of text (printf allows up to 2^31 - 1).
inline constexpr int kMaxFieldWidth = (1 << 23) - 1;

// Appends printf output; the format comes from the event (as in libtraceevent).
template <typename... A>
void appendf(TextOut& out, const char* format, A... a) {
  char buf[128];
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wformat-nonliteral"
#pragma GCC diagnostic ignored "-Wformat-security"
  int n = std::snprintf(buf, sizeof buf, format, a...);
  if (n < 0) return;
  if (static_cast<size_t>(n) < sizeof buf) {
    out.append(buf, n);
    return;
  }
  std::snprintf(out.reserve_tail(static_cast<size_t>(n) + 1), static_cast<size_t>(n) + 1, format, a...);
  out.commit(static_cast<size_t>(n));
#pragma GCC diagnostic pop
}

// One record seen through its event's print fmt. Where libtraceevent reads
// past a record (lengths beyond the data) this stops at the record's end.
struct Eval {
  Bytes data;
  const EventFormat& ev;
  const TraceContext& ctx;
  Endian e;

  uint64_t read_number(size_t off, size_t size) const {
    if (off + size > data.size()) return 0;
    return load_uint(data.data() + off, size, e);
  }
  const Field* field(const Node* n) const { return n->field >= 0 ? &ev.fields[n->field] : nullptr; }

  // Where a __data_loc / __rel_loc field's bytes are (0, 0 when outside the record).
  void dynamic_offset(const Field& f, uint32_t& off, uint32_t& len) const {
    off = 0;
    len = 0;
    if (size_t(f.offset) + f.size > data.size()) return;
    uint64_t val = load_uint(data.data() + f.offset, f.size, e);
    uint32_t size = static_cast<uint32_t>(data.size());
    uint32_t o = static_cast<uint32_t>(val & 0xffff);
    uint32_t l = f.size == 2 ? size - o : static_cast<uint32_t>((val >> 16) & 0xffff);
    off = o > size ? 0 : o;
    len = o + l > size ? 0 : l;
    if (f.has(kFieldRelLoc)) off += f.offset + f.size;
  }

  // A K::field node's value (0 when the record is too short for it).
  uint64_t field_number(const Node* a) const {
    const Field* f = field(a);
    if (!f || size_t(f->offset) + f->size > data.size()) return 0;
    return load_uint(data.data() + f->offset, f->size, e);
  }

  // print_parse_data: every segment of a parsed print fmt. Inline, with
  // segment(), so a record's plain fields print without a call each.
  void segments(TextOut& out, const SegmentList& segs, const std::vector<NodePtr>& args) const {
    for (const Segment& s : segs.segs) segment(out, s, args);
  }
  // print_parse_data for one segment.
  void segment(TextOut& out, const Segment& s, const std::vector<NodePtr>& args) const {
    int len_arg = s.len_arg >= 0 ? star_width(args[s.len_arg].get()) : -1;
    switch (s.type) {
      case SegType::text:
        out += s.format;
        return;
      case SegType::digit: {
        // Most conversions print a field as it is: read it here rather
        // than through num()'s recursive switch.
        const Node* a = args[s.arg].get();
        number(out, s, len_arg, a->kind == K::field ? field_number(a) : num(a));
        return;
      }
      case SegType::pointer:
        pointer(out, s.format, s.len_arg >= 0 ? len_arg : 1, args[s.arg].get());
        return;
      case SegType::string: {
        // print_arg_string goes through a helper trace_seq: NULs end it.
        size_t start = out.size();
        str(out, s.format, len_arg, args[s.arg].get());
        size_t nul = out.find('\0', start);
        if (nul != std::string::npos) out.truncate(nul);
        return;
      }
    }
  }

  // A digit conversion of `val`.
  void number(TextOut& out, const Segment& s, int len_arg, uint64_t val) const {
    if (s.fast_conv)
      append_fast_number(out, s, val);
    else
      number_by_printf(out, s, len_arg, val);
  }
  // An argument's value (libtraceevent eval_num_arg).
  uint64_t num(const Node* a) const;
  // An argument as %s prints it (print_str_arg).
  void str(TextOut& out, const std::string& format, int len_arg, const Node* a) const;
  // print_arg_pointer: %p and its extensions (print_fmt_pointer.cc).
  void pointer(TextOut& out, const std::string& format, int plen, const Node* arg) const;

 private:
  [[gnu::noinline]] void number_by_printf(TextOut& out, const Segment& s, int len_arg, uint64_t val) const;
  // A `*` argument's width, held to kMaxFieldWidth. Out of line: rare, and
  // segment() must stay small enough to be inlined.
  [[gnu::noinline]] int star_width(const Node* a) const;
  uint64_t atom_value(const Node* n) const;
  uint64_t call_value(const Node* a) const;
  void call(const Node* a, TextOut& out) const;
  uint64_t num_op(const Node* a) const;
  uint64_t index_op(const Node* a) const;
  uint64_t default_op(const Node* a) const;

  void str_field(TextOut& out, const std::string& format, int len_arg, const Node* a) const;
  void str_flags(TextOut& out, const std::string& format, int len_arg, const Node* a) const;
  void str_symbol(TextOut& out, const std::string& format, int len_arg, const Node* a) const;
  bool array_start(const Node* a, size_t& off) const;
  void str_hex(TextOut& out, const Node* a) const;
  void str_int_array(TextOut& out, const Node* a) const;
  void str_dynamic(TextOut& out, const std::string& format, int len_arg, const Node* a) const;
  void str_mask(TextOut& out, const std::string& format, int len_arg, const Node* a) const;

  // print_fmt_pointer.cc
  const uint8_t* field_bytes(TextOut& out, const Node* arg, uint32_t size, std::string_view invalid) const;
  void mac(TextOut& out, const char* f, const Node* arg) const;
  void uuid(TextOut& out, const char* f, const Node* arg) const;
  void hex_bytes(TextOut& out, const char* f, int plen, const Node* arg) const;
  void plain_pointer(TextOut& out, const std::string& format, const Node* arg) const;
  void ip(TextOut& out, const char* p, const Node* arg) const;
  void ip_sockaddr(TextOut& out, char i, const char* p, const Node* a) const;
};

// ---------------------------------------------------------------- bprint ----

// The "%ps: <printk format>" text of one bprint format address, and its
// segments for each argument count seen (the count depends on the record).
struct BprintFormat {
  std::string text;
  std::unordered_map<size_t, SegmentList> by_nargs;
};
using BprintCache = std::unordered_map<uint64_t, BprintFormat>;

// pretty_print for ftrace:bprint. `failed` carries libtraceevent's event
// flag: a conversion left without an argument fails the event, and every
// later bprint record prints as "[FAILED TO PARSE]".
void print_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out,
                  BprintCache& cache, bool& failed);

}  // namespace tracebed::decode::print_fmt
