// The print fmt's format string, split into literal text and conversions
// the way libtraceevent 1.7.1's parse_args does, each conversion bound to
// its argument; plain digit conversions are planned for printing without
// snprintf.
#include <fmt/format.h>

#include "framework/decode/print_fmt_internal.h"

namespace tracebed::decode::print_fmt {

namespace {

// Fills a digit segment's fast_* fields when its format is that simple.
void plan_fast_number(Segment& s) {
  const std::string& f = s.format;
  size_t i = 1;
  bool zero = false, left = false;
  for (; i < f.size() && (f[i] == '0' || f[i] == '-'); ++i) (f[i] == '0' ? zero : left) = true;
  unsigned width = 0;
  for (; i < f.size() && f[i] >= '0' && f[i] <= '9'; ++i) width = width * 10 + static_cast<unsigned>(f[i] - '0');
  int ls = 0;
  for (; i < f.size() && (f[i] == 'h' || f[i] == 'l'); ++i) ls += f[i] == 'l' ? 1 : -1;
  if (i < f.size() && (f[i] == 'z' || f[i] == 'Z') && ls == 0) {  // size_t: a long here
    ls = 1;
    ++i;
  } else if (i < f.size() && f[i] == 'L' && ls == 0) {  // "%Lu" (sched_stat_runtime): glibc reads a long long
    ls = 2;
    ++i;
  }
  if (i + 1 != f.size() || width > 64 || ls != s.ls || ls < -2 || ls > 2 || s.len_arg >= 0) return;
  const char conv = f[i];
  if (conv != 'd' && conv != 'i' && conv != 'u' && conv != 'x' && conv != 'X' && conv != 'o') return;
  s.fast_conv = conv;
  s.fast_zero = zero && !left;  // printf: '-' overrides '0'
  s.fast_left = left;
  s.fast_width = static_cast<uint8_t>(width);
}

// parse_arg_format_pointer: how many chars after "%p" belong to the conversion.
int pointer_suffix_len(const char* f) {
  int ret = 0;
  switch (*f) {
    case 'F': case 'S': case 'f': case 's':
      return 1;
    case 'M': case 'm':
      if (f[1] == 'R' || f[1] == 'F') ret++;
      return ret + 1;
    case 'I': case 'i': {
      int index = 2;
      switch (f[1]) {
        case 'S':
          while (f[index] == 'p' || f[index] == 'f' || f[index] == 's') {
            ret++;
            index++;
          }
          [[fallthrough]];
        case '4':
          if (f[index] == 'h' || f[index] == 'n' || f[index] == 'l' || f[index] == 'b') {
            ret++;
            index++;
          }
          if (f[1] == '4') {
            ret++;
            break;
          }
          [[fallthrough]];
        case '6':
          if (f[index] == 'c') ret++;
          ret++;
          break;
      }
      return ret + 1;
    }
    case 'U':
      if (f[1] == 'L' || f[1] == 'l' || f[1] == 'B' || f[1] == 'b') ret++;
      return ret + 1;
    case 'h':
      if (f[1] == 'C' || f[1] == 'D' || f[1] == 'N') ret++;
      return ret + 1;
    default:
      return 0;
  }
}

// Holds a conversion's width and precision to what the kernel prints
// (kMaxFieldWidth): "%01824654784d" becomes "%08388607d".
void clamp_widths(std::string& format) {
  for (size_t i = 1; i < format.size();) {
    if (format[i] < '0' || format[i] > '9') {
      ++i;
      continue;
    }
    size_t end = i;
    uint64_t value = 0;
    for (; end < format.size() && format[end] >= '0' && format[end] <= '9'; ++end)
      value = std::min<uint64_t>(value * 10 + static_cast<uint64_t>(format[end] - '0'), uint64_t{1} << 32);
    if (value > static_cast<uint64_t>(kMaxFieldWidth)) {
      const bool zero_flag = format[i] == '0';
      format.replace(i, end - i, (zero_flag ? "0" : "") + std::to_string(kMaxFieldWidth));
      end = i + (zero_flag ? 1 : 0) + std::to_string(kMaxFieldWidth).size();
    }
    i = end;
  }
}

// The arguments a format binds, in order.
struct Binder {
  SegmentList& out;
  int nargs;
  int next_arg = 0;

  bool have_arg() const { return next_arg < nargs; }
  void fail(std::string why) {
    out.failed = true;
    if (out.why.empty()) out.why = std::move(why);
  }
};

// The conversion letter at `f` of the conversion starting at `start`: its
// segment, bound to the next argument. %p takes the letters of its
// extension with it (f moves to the last). False, and the list failed, when
// no argument is left: the letter is then read as text.
bool add_conversion(Binder& b, const char* start, const char*& f, int ls, int len_arg) {
  SegType type;
  switch (*f) {
    case 'p': type = SegType::pointer; break;
    // No 'c': libtraceevent 1.7.1 prints ">c<" for %c and binds nothing.
    case 'd': case 'u': case 'i': case 'x': case 'X': case 'o': type = SegType::digit; break;
    case 's': type = SegType::string; break;
    default:
      b.out.segs.push_back({SegType::text, fmt::format(">{}<", *f), -1, -1, 0});
      return true;
  }
  if (!b.have_arg()) {
    b.fail(type == SegType::string ? "no matching argument" : "no argument match");
    return false;
  }
  if (type == SegType::pointer) f += pointer_suffix_len(f + 1);
  size_t len = f + 1 - start;
  if (len > (type == SegType::digit ? 30u : 31u)) {
    b.fail("bad format");
    len = 31;
  }
  std::string format(start, len);
  clamp_widths(format);
  if (type == SegType::digit && (ls < -2 || ls > 2)) b.fail(fmt::format("bad count ({})", ls));
  if (type == SegType::string) {
    // Length modifiers would make printf read a wide string ("%ls")
    // from our bytes: drop them, they carry no meaning for %s here.
    std::erase_if(format, [](char c) { return c == 'h' || c == 'l' || c == 'L' || c == 'z' || c == 'Z'; });
    ls = 0;
  }
  b.out.segs.push_back({type, std::move(format), b.next_arg++, len_arg, ls});
  return true;
}

// The conversion at `start` ('%', not "%%"): flags, width and length, then
// its letter. Returns where the text after it starts.
const char* parse_conversion(Binder& b, const char* start) {
  const char* f = start + 1;
  int ls = 0;
  int len_arg = -1;
  for (; *f; ++f) {
    switch (*f) {
      // No '+' or ' ': 1.7.1 prints ">+<" / "> <" for those.
      case '#': case '.': case '-':
      case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
        continue;
      case 'h': ls--; continue;
      case 'l': ls++; continue;
      case 'L': ls = 2; continue;
      case 'z': case 'Z': ls = 1; continue;
      case '*':
        if (!b.have_arg()) {
          b.fail("no argument for `*`");
          return f;
        }
        if (len_arg >= 0) {
          b.fail("argument already matched");
          return f;
        }
        len_arg = b.next_arg++;
        continue;
      default:
        return add_conversion(b, start, f, ls, len_arg) ? f + 1 : f;
    }
  }
  return f;
}

// Literal text with escapes from `p` up to the next conversion, as one
// segment. Returns where it ended.
const char* parse_literal(const char* p, const char* end, SegmentList& out) {
  std::string text;
  for (; p < end; ++p) {
    if (*p == '\\') {
      ++p;
      if (p >= end) break;
      switch (*p) {
        case 'n': text.push_back('\n'); break;
        case 't': text.push_back('\t'); break;
        case 'r': text.push_back('\r'); break;
        case '\\': text.push_back('\\'); break;
        default: text.push_back(*p); break;
      }
    } else if (*p == '%') {
      if (p[1] == '%') {
        text.push_back('%');
        ++p;
      } else {
        break;
      }
    } else {
      text.push_back(*p);
    }
  }
  out.segs.push_back({SegType::text, std::move(text), -1, -1, 0});
  return p;
}

}  // namespace

SegmentList build_segments(const std::string& fmt, int nargs) {
  SegmentList out;
  Binder binder{out, nargs};
  const char* p = fmt.c_str();
  const char* end = p + fmt.size();
  while (p < end) {
    if (*p == '%' && p[1] != '%')
      p = parse_conversion(binder, p);
    else
      p = parse_literal(p, end, out);
  }
  for (Segment& seg : out.segs)
    if (seg.type == SegType::digit) plan_fast_number(seg);
  return out;
}

}  // namespace tracebed::decode::print_fmt
