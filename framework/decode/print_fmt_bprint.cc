// ftrace:bprint (trace_printk with a constant format): the printk format
// the record points to, with the arguments the kernel's vbin_printf packed
// into the record, printed as libtraceevent 1.7.1 does (get_bprint_format,
// make_bprint_args), including its failure: a conversion left without an
// argument fails the event for good.
#include <fmt/format.h>

#include "framework/decode/print_fmt.h"
#include "framework/decode/print_fmt_internal.h"
#include "framework/decode/print_fmt_lexer.h"

namespace tracebed::decode {

namespace print_fmt {

using namespace std::string_view_literals;

namespace {

struct BArg {
  bool is_string = false;
  uint64_t num = 0;
  std::string_view str;
};

// make_bprint_args: decodes the binary arguments vbin_printf packed, walking
// the format the way libtraceevent does (including what it skips: `%-10s`,
// `%c` and `%h...` take no argument there).
size_t decode_bprint_args(std::string_view fmt, Bytes data, size_t pos, const TraceContext& ctx, BArg* args,
                          size_t max_args) {
  size_t n = 0;
  auto add = [&](BArg a) {
    if (n < max_args) args[n++] = a;
  };
  const char* p = fmt.data();
  const char* end = p + fmt.size();
  for (; pos < data.size() && p < end; ++p) {
    if (*p != '%') continue;
    int ls = 0;
    for (;;) {
      ++p;
      if (p >= end) return n;
      char c = *p;
      if (c == 'l') { ls++; continue; }
      if (c == 'L') { ls = 2; continue; }
      if ((c >= '0' && c <= '9') || c == '.' || c == '#' || c == '+') continue;
      if (c == 'z' || c == 'Z') { ls = 1; continue; }
      bool is_string = false;
      bool is_number = false;
      if (c == 'p') {
        ls = 1;
        is_number = true;
        if (p + 1 < end && c_isalnum(static_cast<unsigned char>(p[1]))) {
          ++p;
          char s = *p;
          bool plain = s == 's' || s == 'S' || s == 'x' || ((s == 'f' || s == 'F') && (p + 1 >= end || p[1] != 'w'));
          if (!plain && pos < data.size() && c_isprint(data[pos])) {
            is_string = true;
            is_number = false;
          }
        }
      } else if (c == 'd' || c == 'u' || c == 'i' || c == 'x' || c == 'X' || c == 'o') {
        is_number = true;
      } else if (c == '*') {
        is_number = true;
      } else if (c == 's') {
        is_string = true;
      }
      if (is_string) {
        const char* s = reinterpret_cast<const char*>(data.data()) + pos;
        size_t len = text_len(s, data.size() - pos);
        add(BArg{true, 0, std::string_view(s, len)});
        pos += len + 1;
        break;
      }
      if (is_number) {
        size_t vsize;
        if (c == '*') vsize = 4;
        else if (ls == 0) vsize = 4;
        else if (ls == 1) vsize = ctx.long_size;
        else if (ls == 2) vsize = 8;
        else vsize = static_cast<size_t>(ls);
        // The kernel aligns every argument to 4 bytes (records start aligned).
        pos = (pos + 3) & ~size_t(3);
        uint64_t v = pos + vsize <= data.size() ? load_uint(data.data() + pos, vsize, ctx.endian) : 0;
        pos += vsize;
        add(BArg{false, v, {}});
        if (c == '*') continue;  // the width; the conversion follows
      }
      break;
    }
  }
  return n;
}

// The cached text of the format at `fmt_addr`: "%ps: " and the printk format.
BprintFormat& bprint_format(BprintCache& cache, uint64_t fmt_addr, const TraceContext& ctx) {
  auto it = cache.find(fmt_addr);
  if (it != cache.end()) return it->second;
  BprintFormat f;
  if (auto s = ctx.printk_format(fmt_addr))
    f.text = fmt::format("%ps: {}", *s);
  else
    f.text = fmt::format("%ps: (NO FORMAT FOUND at {:x})\n", fmt_addr);
  return cache.emplace(fmt_addr, std::move(f)).first->second;
}

// The segments of `format` with the decoded arguments in place of argument
// nodes: numbers as atoms, strings as binary strings.
void print_bprint_args(TextOut& out, const Eval& ev, const SegmentList& segs, const BArg* args, size_t nargs) {
  thread_local Node scratch;  // stands in for an argument node (an atom or a binary string)
  auto bind = [&](int idx) -> const Node* {
    if (idx < 0 || static_cast<size_t>(idx) >= nargs) return nullptr;
    const BArg& a = args[idx];
    scratch.kind = a.is_string ? K::bstring : K::atom;
    scratch.number = a.is_string ? 0 : a.num;
    if (a.is_string)
      scratch.text.assign(a.str);
    else
      scratch.text = std::to_string(static_cast<long long>(a.num));
    return &scratch;
  };
  for (const Segment& s : segs.segs) {
    if (s.type == SegType::text) {
      out += s.format;
      continue;
    }
    int len_arg = -1;
    if (s.len_arg >= 0) {
      const Node* l = bind(s.len_arg);
      len_arg = l ? static_cast<int>(ev.num(l)) : 0;
    }
    const Node* a = bind(s.arg);
    if (!a) continue;
    switch (s.type) {
      case SegType::digit: ev.number(out, s, len_arg, a->kind == K::atom ? a->number : 0); break;
      case SegType::pointer: ev.pointer(out, s.format, s.len_arg >= 0 ? len_arg : 1, a); break;
      case SegType::string: {
        size_t start = out.size();
        ev.str(out, s.format, len_arg, a);
        size_t nul = out.find('\0', start);
        if (nul != std::string::npos) out.truncate(nul);
        break;
      }
      default: break;
    }
  }
}

}  // namespace

void print_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out,
                  BprintCache& cache, bool& failed) {
  if (failed) {
    out += "[FAILED TO PARSE]"sv;
    format_raw_fields(record, event, ctx, out);
    return;
  }
  const Field* fmt_field = event.field("fmt");
  const Field* buf_field = event.field("buf");
  const Field* ip_field = event.field("ip");
  if (!fmt_field || !buf_field || !ip_field) return;
  Bytes data = record.data;
  uint64_t fmt_addr = fmt_field->read_uint(data, ctx.endian);
  uint64_t ip = ip_field->read_uint(data, ctx.endian);
  BprintFormat& format = bprint_format(cache, fmt_addr, ctx);

  constexpr size_t kMaxArgs = 64;
  BArg args[kMaxArgs];
  args[0] = BArg{false, ip, {}};
  size_t nargs = 1 + decode_bprint_args(std::string_view(format.text).substr(5), data, buf_field->offset, ctx,
                                        args + 1, kMaxArgs - 1);
  auto seg_it = format.by_nargs.find(nargs);
  if (seg_it == format.by_nargs.end())
    seg_it = format.by_nargs.emplace(nargs, build_segments(format.text, static_cast<int>(nargs))).first;
  const SegmentList& segs = seg_it->second;
  if (segs.failed) failed = true;  // this record still prints; later ones do not

  print_bprint_args(out, Eval{data, event, ctx, ctx.endian}, segs, args, nargs);
}

}  // namespace print_fmt

void format_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out) {
  print_fmt::BprintCache cache;
  bool failed = false;
  print_fmt::print_bprint(record, event, ctx, out, cache, failed);
}

}  // namespace tracebed::decode
