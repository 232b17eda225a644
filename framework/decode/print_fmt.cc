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
// only appends to `out`.
#include "framework/decode/print_fmt.h"

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unordered_map>
#include <vector>

#include "framework/decode/text.h"
#include "framework/decode/trace_context.h"

namespace tracebed {

// Literals as string_views: appending or comparing one per record then
// costs no strlen.
using namespace std::string_view_literals;

namespace {

// ---------------------------------------------------------------- lexer ----

// libtraceevent's token types, in its order (event_item_type relies on it).
enum class Tok : uint8_t { error, none, space, newline, op, delim, item, dquote, squote };

bool c_isspace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
bool c_isalnum(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool c_isprint(int c) { return c >= 0x20 && c < 0x7f; }
bool c_isdigit(int c) { return c >= '0' && c <= '9'; }

Tok char_type(int ch) {
  if (ch == '\n') return Tok::newline;
  if (c_isspace(ch)) return Tok::space;
  if (c_isalnum(ch) || ch == '_') return Tok::item;
  if (ch == '\'') return Tok::squote;
  if (ch == '"') return Tok::dquote;
  if (!c_isprint(ch)) return Tok::none;
  if (ch == '(' || ch == ')' || ch == ',') return Tok::delim;
  return Tok::op;
}

bool is_item_type(Tok t) { return t == Tok::item || t == Tok::dquote || t == Tok::squote; }

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}

  // One token, spaces included (libtraceevent __read_token).
  Tok raw(std::string& tok) {
    tok.clear();
    int ch = get();
    if (ch < 0) return Tok::none;
    Tok type = char_type(ch);
    if (type == Tok::none) return type;
    tok.push_back(static_cast<char>(ch));
    switch (type) {
      case Tok::newline:
      case Tok::delim:
        return type;
      case Tok::op: {
        int next = peek();
        if (ch == '-' && next == '>') {
          tok.push_back(static_cast<char>(get()));
          return type;
        }
        if (ch == '-' || ch == '+' || ch == '|' || ch == '&' || ch == '>' || ch == '<') {
          if (next == ch) {
            tok.push_back(static_cast<char>(get()));
            if (ch == '>' || ch == '<') test_equal(tok);  // >>= <<=
            return type;
          }
          test_equal(tok);
          return type;
        }
        if (ch == '!' || ch == '=') test_equal(tok);
        return type;
      }
      case Tok::dquote:
      case Tok::squote: {
        tok.clear();  // quotes are not kept
        int quote = ch;
        for (;;) {
          for (;;) {
            int last = ch;
            ch = get();
            tok.push_back(static_cast<char>(ch));
            // "\\" cancels itself, but only for the test right here (as in
            // libtraceevent: the next round sees a backslash again).
            if (ch == '\\' && last == '\\') last = 0;
            if (ch <= 0) break;
            if (!((ch != quote && c_isprint(ch)) || last == '\\' || ch == '\n')) break;
          }
          tok.pop_back();  // the closing quote, or whatever ended the string
          if (ch <= 0) return Tok::none;
          if (type != Tok::dquote) return type;
          // Adjacent string literals concatenate.
          size_t save = pos_;
          int c;
          do c = get(); while (c_isspace(c));
          if (c != '"') {
            pos_ = save;
            return type;
          }
          ch = c;
        }
      }
      default:
        break;
    }
    while (char_type(peek()) == type) tok.push_back(static_cast<char>(get()));
    return type;
  }

  // Skips spaces (tep_read_token).
  Tok read(std::string& tok) {
    for (;;) {
      Tok t = raw(tok);
      if (t != Tok::space) return t;
    }
  }
  // Skips spaces and newlines (read_token_item).
  Tok read_item(std::string& tok) {
    for (;;) {
      Tok t = raw(tok);
      if (t != Tok::space && t != Tok::newline) return t;
    }
  }

 private:
  int get() {
    if (pos_ >= in_.size()) return -1;
    // libtraceevent reads plain (signed) chars: bytes >= 0x80 look negative.
    return static_cast<signed char>(in_[pos_++]);
  }
  int peek() const { return pos_ >= in_.size() ? -1 : static_cast<signed char>(in_[pos_]); }
  void test_equal(std::string& tok) {
    if (peek() == '=') tok.push_back(static_cast<char>(get()));
  }

  std::string_view in_;
  size_t pos_ = 0;
};

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

uint64_t c_strtoull(const std::string& s) { return std::strtoull(s.c_str(), nullptr, 0); }
long long c_strtoll(const std::string& s) { return std::strtoll(s.c_str(), nullptr, 0); }

NodePtr make_atom(std::string text) {
  auto n = std::make_unique<Node>();
  n->kind = K::atom;
  n->number = c_strtoull(text);
  n->text = std::move(text);
  return n;
}

int op_prio(std::string_view op) {
  if (op.size() == 1) {
    switch (op[0]) {
      case '~': case '!': return 4;
      case '*': case '/': case '%': return 6;
      case '+': case '-': return 7;
      case '<': case '>': return 9;
      case '&': return 11;
      case '^': return 12;
      case '|': return 13;
      case '?': return 16;
      default: return -1;
    }
  }
  if (op == "++" || op == "--") return 3;
  if (op == ">>" || op == "<<") return 8;
  if (op == ">=" || op == "<=") return 9;
  if (op == "==" || op == "!=") return 10;
  if (op == "&&") return 14;
  if (op == "||") return 15;
  return -1;
}

bool is_binary_op(std::string_view t) {
  static constexpr std::string_view kOps[] = {">>", "<<", "&", "|", "&&", "||", "-", "+", "*",
                                              "^",  "/",  "%", "<", ">", "<=", ">=", "==", "!="};
  for (auto o : kOps)
    if (t == o) return true;
  return false;
}

// libtraceevent eval_type_str: casts mask, they never sign-extend.
uint64_t eval_type_str(uint64_t val, std::string_view type, bool pointer) {
  if (type.size() < 2) return val;
  if (pointer) {
    if (type.back() != '*') return val;
    return eval_type_str(val, type.substr(0, type.size() - 2), false);
  }
  if (type.back() == '*') return val;
  if (type.substr(0, 6) == "struct") return val;
  if (type == "u8") return val & 0xff;
  if (type == "u16") return val & 0xffff;
  if (type == "u32") return val & 0xffffffff;
  if (type == "u64" || type == "s64") return val;
  if (type == "s8") return static_cast<uint64_t>(static_cast<char>(val)) & 0xff;
  if (type == "s16") return static_cast<uint64_t>(static_cast<short>(val)) & 0xffff;
  if (type == "s32") return static_cast<uint64_t>(static_cast<int>(val)) & 0xffffffff;
  if (type.substr(0, 9) == "unsigned ") type.remove_prefix(9);
  if (type == "char") return val & 0xff;
  if (type == "short") return val & 0xffff;
  if (type == "int") return val & 0xffffffff;
  return val;
}

// libtraceevent eval_flag: numbers, or a few names old kernels left unconverted.
long long eval_flag(const std::string& s) {
  if (!s.empty() && c_isdigit(static_cast<unsigned char>(s[0]))) return static_cast<long long>(c_strtoull(s));
  static constexpr std::pair<std::string_view, long long> kFlags[] = {
      {"HI_SOFTIRQ", 0},     {"TIMER_SOFTIRQ", 1},   {"NET_TX_SOFTIRQ", 2},  {"NET_RX_SOFTIRQ", 3},
      {"BLOCK_SOFTIRQ", 4},  {"IRQ_POLL_SOFTIRQ", 5}, {"TASKLET_SOFTIRQ", 6}, {"SCHED_SOFTIRQ", 7},
      {"HRTIMER_SOFTIRQ", 8}, {"RCU_SOFTIRQ", 9},    {"HRTIMER_NORESTART", 0}, {"HRTIMER_RESTART", 1},
  };
  for (auto& [name, v] : kFlags)
    if (s == name) return v;
  return -1;
}

// ----------------------------------------------------- format segments ----

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

// printf of plan_fast_number's conversions: `val` cast to the length
// modifier's type as number() passes it, then printed.
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

struct SegmentList {
  std::vector<Segment> segs;
  bool failed = false;
  std::string why;
};

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

// libtraceevent parse_args: splits the format into literal text and
// conversions, binding `nargs` arguments in order. A conversion without an
// argument marks the list failed and, as there, leaves its letter to be
// printed as text.
SegmentList build_segments(const std::string& fmt, int nargs) {
  SegmentList out;
  int next_arg = 0;
  auto have_arg = [&] { return next_arg < nargs; };
  const char* p = fmt.c_str();
  const char* end = p + fmt.size();
  while (p < end) {
    if (*p == '%' && p[1] != '%') {
      const char* start = p;
      const char* f = p + 1;
      int ls = 0;
      int len_arg = -1;
      bool done = false, stop = false;
      auto fail = [&](std::string why) {
        out.failed = true;
        if (out.why.empty()) out.why = std::move(why);
      };
      while (*f && !done && !stop) {
        switch (*f) {
          // No '+' or ' ': 1.7.1 prints ">+<" / "> <" for those.
          case '#': case '.': case '-':
          case '0': case '1': case '2': case '3': case '4': case '5': case '6': case '7': case '8': case '9':
            break;
          case 'h': ls--; break;
          case 'l': ls++; break;
          case 'L': ls = 2; break;
          case 'z': case 'Z': ls = 1; break;
          case '*':
            if (!have_arg()) {
              fail("no argument for `*`");
              stop = true;
              break;
            }
            if (len_arg >= 0) {
              fail("argument already matched");
              stop = true;
              break;
            }
            len_arg = next_arg++;
            break;
          case 'p': {
            if (!have_arg()) {
              fail("no argument match");
              stop = true;
              break;
            }
            f += pointer_suffix_len(f + 1);
            size_t len = f + 1 - start;
            if (len > 31) {
              fail("bad format");
              len = 31;
            }
            out.segs.push_back({SegType::pointer, std::string(start, len), next_arg++, len_arg, ls});
            done = true;
            break;
          }
          // No 'c': libtraceevent 1.7.1 prints ">c<" for %c and binds nothing.
          case 'd': case 'u': case 'i': case 'x': case 'X': case 'o': {
            if (!have_arg()) {
              fail("no argument match");
              stop = true;
              break;
            }
            size_t len = f + 1 - start;
            if (len > 30) {
              fail("bad format");
              len = 31;
            }
            if (ls < -2 || ls > 2) {
              fail(fmt::format("bad count ({})", ls));
            }
            out.segs.push_back({SegType::digit, std::string(start, len), next_arg++, len_arg, ls});
            done = true;
            break;
          }
          case 's': {
            if (!have_arg()) {
              fail("no matching argument");
              stop = true;
              break;
            }
            size_t len = f + 1 - start;
            if (len > 31) {
              fail("bad format");
              len = 31;
            }
            // Length modifiers would make printf read a wide string ("%ls")
            // from our bytes: drop them, they carry no meaning for %s here.
            std::string sf(start, len);
            std::erase_if(sf, [](char c) { return c == 'h' || c == 'l' || c == 'L' || c == 'z' || c == 'Z'; });
            out.segs.push_back({SegType::string, std::move(sf), next_arg++, len_arg, 0});
            done = true;
            break;
          }
          default:
            out.segs.push_back({SegType::text, fmt::format(">{}<", *f), -1, -1, 0});
            done = true;
            break;
        }
        if (!stop) ++f;
      }
      p = f;
      continue;
    }
    // Literal text with escapes, up to the next conversion.
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
  }
  for (Segment& seg : out.segs)
    if (seg.type == SegType::digit) plan_fast_number(seg);
  return out;
}

// Helper functions libtraceevent's plugins register and trace-cmd report
// loads (plugin_jbd2.c, plugin_xen.c): print fmts that call them parse.
struct HelperFunction {
  std::string_view name;
  int nr_args;
};
constexpr HelperFunction kHelpers[] = {
    {"jiffies_to_msecs", 1},
    {"jbd2_dev_to_name", 1},
    {"xen_hypercall_name", 1},
};

const HelperFunction* find_helper(std::string_view name) {
  for (const HelperFunction& h : kHelpers)
    if (h.name == name) return &h;
  return nullptr;
}

// plugin_xen.c's names, indexed by __HYPERVISOR_* number.
std::string_view xen_hypercall_name(uint64_t op) {
  static constexpr std::string_view kNames[] = {
      "(set_trap_table)", "(mmu_update)", "(set_gdt)", "(stack_switch)", "(set_callbacks)",
      "(fpu_taskswitch)", "(sched_op_compat)", "(dom0_op)", "(set_debugreg)", "(get_debugreg)",
      "(update_descriptor)", "", "(memory_op)", "(multicall)", "(update_va_mapping)",
      "(set_timer_op)", "(event_channel_op_compat)", "(xen_version)", "(console_io)", "(physdev_op_compat)",
      "(grant_table_op)", "(vm_assist)", "(update_va_mapping_otherdomain)", "(iret)", "(vcpu_op)",
      "(set_segment_base)", "(mmuext_op)", "(acm_op)", "(nmi_op)", "(sched_op)",
      "(callback_op)", "(xenoprof_op)", "(event_channel_op)", "(physdev_op)", "(hvm_op)",
      "", "", "", "", "", "", "", "", "", "", "", "", "",
      "(arch_0)", "(arch_1)", "(arch_2)", "(arch_3)", "(arch_4)", "(arch_5)", "(arch_6)", "(arch_7)",
  };
  uint32_t i = static_cast<uint32_t>(op);
  return i < std::size(kNames) ? kNames[i] : std::string_view();
}

// ---------------------------------------------------------------- parser ----

class Parser {
 public:
  Parser(std::string_view text, const EventFormat& ev) : lex_(text), ev_(ev) {}

  Status parse(std::string& format, std::vector<NodePtr>& args) {
    std::string tok;
    Tok t = lex_.read_item(tok);
    if (t != Tok::item || tok != "print") {
      // Callers pass the text after "print fmt: "; accept both.
      if (t != Tok::dquote) return fail("expected the format string in double quotes");
    } else {
      if (lex_.read(tok) != Tok::item || tok != "fmt") return fail("expected `print fmt:`");
      if (lex_.read(tok) != Tok::op || tok != ":") return fail("expected `print fmt:`");
      if (lex_.read(tok) != Tok::dquote) return fail("expected the format string in double quotes");
    }
    format = tok;
    t = lex_.read_item(tok);
    if (t == Tok::none) return {};
    if (t != Tok::delim || tok != ",") return fail(fmt::format("expected `,` after the format string, got `{}`", tok));

    // event_read_print_args
    t = Tok::error;
    do {
      if (t == Tok::newline) {
        t = lex_.read_item(tok);
        continue;
      }
      auto arg = std::make_unique<Node>();
      t = process_arg(arg.get(), tok);
      if (t == Tok::error) return fail(error_);
      Node* raw = arg.get();
      args.push_back(std::move(arg));
      if (t == Tok::op) {
        t = process_op(raw, tok);
        if (t == Tok::error) return fail(error_);
        consolidate(raw);
        continue;
      }
      if (t == Tok::delim && tok == ",") continue;
      break;
    } while (t != Tok::none);
    return {};
  }

 private:
  Status fail(std::string why) {
    if (why.empty()) why = "cannot parse print fmt";
    return Error{std::move(why)};
  }
  Tok err(std::string why) {
    if (error_.empty()) error_ = std::move(why);
    return Tok::error;
  }
  bool expect(Tok got, const std::string& tok, Tok want, std::string_view want_tok) {
    if (got != want || tok != want_tok) {
      err(fmt::format("expected `{}` but read `{}`", want_tok, tok));
      return false;
    }
    return true;
  }

  int find_any_field(std::string_view name) const {
    for (size_t i = 0; i < ev_.fields.size(); ++i)
      if (ev_.fields[i].name == name) return static_cast<int>(i);
    return -1;
  }
  // tep_find_field: the event's own fields only.
  int find_field(std::string_view name) const {
    for (size_t i = ev_.common_count; i < ev_.fields.size(); ++i)
      if (ev_.fields[i].name == name) return static_cast<int>(i);
    return -1;
  }

  Tok process_arg(Node* arg, std::string& tok) {
    Tok t = lex_.read(tok);
    return process_arg_token(arg, tok, t);
  }

  Tok process_arg_token(Node* arg, std::string& tok, Tok type) {
    Depth depth(this);
    if (depth.too_deep()) return err(fmt::format("print fmt nests deeper than {} levels", kMaxDepth));
    switch (type) {
      case Tok::item: {
        if (tok == "REC") return process_entry(arg, tok);
        std::string atom = tok;
        Tok t = lex_.read_item(tok);
        if (t == Tok::delim && tok == "(") return process_function(arg, atom, tok);
        while (t == Tok::item) {  // "unsigned long" is one atom
          atom += " "sv;
          atom += tok;
          t = lex_.read_item(tok);
        }
        *arg = std::move(*make_atom(std::move(atom)));
        return t;
      }
      // 1.7.1 keeps a character constant as text, like a string: 'F' is
      // the atom "F", which evaluates to 0 as a number.
      case Tok::squote:
      case Tok::dquote:
        *arg = std::move(*make_atom(tok));
        return lex_.read_item(tok);
      case Tok::delim:
        if (tok == "(") return process_paren(arg, tok);
        [[fallthrough]];
      case Tok::op:
        arg->kind = K::op;
        arg->text = tok;
        arg->left.reset();
        return process_op(arg, tok);
      default:
        return err(fmt::format("unexpected token `{}`", tok));
    }
  }

  // REC->field, or "(REC)->field" (returns item ")" for the caller to finish).
  Tok process_entry(Node* arg, std::string& tok) {
    Tok t = lex_.read_item(tok);
    if (t == Tok::delim && tok == ")") return Tok::item;
    if (!expect(t, tok, Tok::op, "->")) return Tok::error;
    if (lex_.read(tok) != Tok::item) return err(fmt::format("expected a field name after REC->, got `{}`", tok));
    arg->kind = K::field;
    arg->text = tok;
    arg->field = find_any_field(tok);
    return lex_.read(tok);
  }

  Tok process_paren(Node* arg, std::string& tok) {
    Tok t = process_arg(arg, tok);
    if (t == Tok::error) return t;
    if (t == Tok::op) t = process_op(arg, tok);
    if (t == Tok::error) return t;
    if (t == Tok::item && tok == ")") return process_entry(arg, tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    t = lex_.read_item(tok);
    if (is_item_type(t) || (t == Tok::delim && tok == "(")) {
      // "(type)item": a cast.
      if (arg->kind != K::atom) return err("a cast needs a type name");
      auto item = std::make_unique<Node>();
      Node* item_raw = item.get();
      std::string type = std::move(arg->text);
      *arg = Node{};
      arg->kind = K::type;
      arg->text = std::move(type);
      arg->left = std::move(item);
      t = process_arg_token(item_raw, tok, t);
    }
    return t;
  }

  Tok process_op(Node* arg, std::string& tok) {
    Depth depth(this);
    if (depth.too_deep()) return err(fmt::format("print fmt nests deeper than {} levels", kMaxDepth));
    Node* right_raw = nullptr;
    Tok t;
    if (arg->kind == K::op && !arg->left) {
      // unary
      if (tok.size() != 1 || (tok[0] != '~' && tok[0] != '!' && tok[0] != '+' && tok[0] != '-'))
        return err(fmt::format("bad op token {}", tok));
      arg->left = std::make_unique<Node>();  // K::null
      arg->right = std::make_unique<Node>();
      right_raw = arg->right.get();
      t = process_arg(right_raw, tok);
    } else if (tok == "?") {
      auto left = std::make_unique<Node>(std::move(*arg));
      *arg = Node{};
      arg->kind = K::op;
      arg->text = "?";
      arg->left = std::move(left);
      arg->prio = 0;
      t = process_cond(arg, tok);
    } else if (is_binary_op(tok)) {
      auto left = std::make_unique<Node>(std::move(*arg));
      *arg = Node{};
      arg->kind = K::op;
      arg->text = tok;
      arg->left = std::move(left);
      arg->prio = arg->left->kind == K::null ? 0 : op_prio(arg->text);
      if (arg->prio < 0) return err(fmt::format("unknown op '{}'", tok));
      t = lex_.read_item(tok);
      if (arg->text == "*" && t == Tok::delim && tok == ")") {
        // "(void *)": a pointer type, not a multiplication.
        if (arg->left->kind != K::atom) return err("bad pointer type");
        NodePtr l = std::move(arg->left);
        l->text += " *"sv;
        *arg = std::move(*l);
        return t;
      }
      auto right = std::make_unique<Node>();
      right_raw = right.get();
      t = process_arg_token(right_raw, tok, t);
      if (t == Tok::error) return t;
      if (right->kind == K::op && op_prio(arg->text) < op_prio(right->text)) {
        // Rotate by priority, exactly as libtraceevent does (this is what
        // makes `a * (b + c)` evaluate as `(a * b) + c` there).
        arg->right = std::move(right->left);
        std::swap(*arg, *right);
        arg->left = std::move(right);
      } else {
        arg->right = std::move(right);
      }
    } else if (tok == "[") {
      auto left = std::make_unique<Node>(std::move(*arg));
      *arg = Node{};
      arg->kind = K::op;
      arg->text = "[";
      arg->left = std::move(left);
      arg->prio = 0;
      t = process_array(arg, tok);
    } else {
      return err(fmt::format("unknown op '{}'", tok));
    }
    if (t == Tok::op && tok != ":") {
      // An unknown op ("[") has priority -1 and so binds to the right operand.
      int prio = op_prio(tok);
      if (prio > arg->prio) return process_op(arg, tok);
      if (!right_raw) return err(fmt::format("unexpected op '{}'", tok));
      return process_op(right_raw, tok);
    }
    return t;
  }

  Tok process_cond(Node* top, std::string& tok) {
    auto colon = std::make_unique<Node>();
    colon->kind = K::op;
    colon->left = std::make_unique<Node>();
    colon->right = std::make_unique<Node>();
    Tok t = process_arg(colon->left.get(), tok);
    for (;;) {
      if (t == Tok::error) return t;
      if (t == Tok::op && tok != ":") {
        t = process_op(colon->left.get(), tok);
        continue;
      }
      break;
    }
    if (!expect(t, tok, Tok::op, ":")) return Tok::error;
    colon->text = ":";
    t = process_arg(colon->right.get(), tok);
    top->right = std::move(colon);
    return t;
  }

  Tok process_array(Node* top, std::string& tok) {
    auto index = std::make_unique<Node>();
    Tok t = process_arg(index.get(), tok);
    if (!expect(t, tok, Tok::op, "]")) return Tok::error;
    top->right = std::move(index);
    return lex_.read_item(tok);
  }

  // The first argument of __print_flags/__print_symbolic, evaluated whole.
  Tok process_field_arg(Node* arg, std::string& tok) {
    Tok t = process_arg(arg, tok);
    while (t == Tok::op) t = process_op(arg, tok);
    return t;
  }

  // arg_num_eval: constant folding for flag/symbol values (signed).
  bool num_eval(const Node* a, long long& v) {
    long long l = 0, r = 0;
    switch (a->kind) {
      case K::atom:
        v = c_strtoll(a->text);
        return true;
      case K::type:
        if (!num_eval(a->left.get(), v)) return false;
        v = static_cast<long long>(eval_type_str(static_cast<uint64_t>(v), a->text, false));
        return true;
      case K::op: {
        const std::string& op = a->text;
        auto both = [&] { return num_eval(a->left.get(), l) && num_eval(a->right.get(), r); };
        switch (op[0]) {
          case '|':
            if (!both()) return false;
            v = op.size() > 1 ? (l || r) : (l | r);
            return true;
          case '&':
            if (!both()) return false;
            v = op.size() > 1 ? (l && r) : (l & r);
            return true;
          case '<':
            if (!both()) return false;
            if (op.size() == 1) v = l < r;
            else if (op[1] == '<') v = static_cast<long long>(static_cast<uint64_t>(l) << (r & 63));
            else if (op[1] == '=') v = l <= r;
            else return false;
            return true;
          case '>':
            if (!both()) return false;
            if (op.size() == 1) v = l > r;
            else if (op[1] == '>') v = l >> (r & 63);
            else if (op[1] == '=') v = l >= r;
            else return false;
            return true;
          case '=':
            if (!both() || op != "==") return false;
            v = l == r;
            return true;
          case '!':
            if (!both() || op != "!=") return false;
            v = l != r;
            return true;
          case '-':
          case '+':
            if (a->left->kind != K::null && !num_eval(a->left.get(), l)) return false;
            if (!num_eval(a->right.get(), r)) return false;
            v = op[0] == '-' ? static_cast<long long>(static_cast<uint64_t>(l) - static_cast<uint64_t>(r))
                             : static_cast<long long>(static_cast<uint64_t>(l) + static_cast<uint64_t>(r));
            return true;
          case '~':
            if (!num_eval(a->right.get(), r)) return false;
            v = ~r;
            return true;
          default:
            return false;
        }
      }
      default:
        return false;
    }
  }

  bool arg_eval(const Node* a, std::string& out) {
    switch (a->kind) {
      case K::atom:
        out = a->text;
        return true;
      case K::type:
        return arg_eval(a->left.get(), out);
      case K::op: {
        long long v;
        if (!num_eval(a, v)) return false;
        out = std::to_string(v);
        return true;
      }
      default:
        return false;
    }
  }

  // { value, "name" }, ... up to the closing ")" (returned in tok).
  Tok process_fields(std::vector<FlagSym>& list, std::string& tok) {
    Tok t;
    do {
      t = lex_.read_item(tok);
      if (!expect(t, tok, Tok::op, "{")) return Tok::error;
      Node value;
      t = process_arg(&value, tok);
      if (t == Tok::op) t = process_op(&value, tok);
      if (t == Tok::error) return t;
      if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
      std::string v;
      if (!arg_eval(&value, v)) return err("cannot evaluate a flag value");
      Node str;
      t = process_arg(&str, tok);
      if (!expect(t, tok, Tok::op, "}")) return Tok::error;
      std::string s;
      if (!arg_eval(&str, s)) return err("cannot evaluate a flag name");
      list.push_back(FlagSym{eval_flag(v), std::move(s)});
      t = lex_.read_item(tok);
    } while (t == Tok::delim && tok == ",");
    return t;
  }

  Tok process_flags(Node* arg, std::string& tok, K kind) {
    *arg = Node{};
    arg->kind = kind;
    arg->left = std::make_unique<Node>();
    Tok t = process_field_arg(arg->left.get(), tok);
    if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
    if (kind == K::flags) {
      t = lex_.read_item(tok);
      if (is_item_type(t)) {
        arg->text = tok;
        arg->has_delim = true;
        t = lex_.read_item(tok);
      }
      if (!expect(t, tok, Tok::delim, ",")) return Tok::error;
    }
    t = process_fields(arg->syms, tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    return lex_.read_item(tok);
  }

  // alloc_and_process_delim: one argument of __print_hex & co.
  bool process_delim_arg(NodePtr& out, std::string_view next, std::string& tok) {
    out = std::make_unique<Node>();
    Tok t = process_arg(out.get(), tok);
    if (t == Tok::op) {
      t = process_op(out.get(), tok);
      if (t == Tok::error) return false;
      consolidate(out.get());
    }
    return expect(t, tok, Tok::delim, next);
  }

  Tok process_function(Node* arg, const std::string& name, std::string& tok) {
    *arg = Node{};
    if (name == "__print_flags") return process_flags(arg, tok, K::flags);
    if (name == "__print_symbolic") return process_flags(arg, tok, K::symbol);
    if (name == "__print_hex" || name == "__print_hex_str") {
      arg->kind = name == "__print_hex" ? K::hex : K::hex_str;
      if (!process_delim_arg(arg->left, ",", tok) || !process_delim_arg(arg->right, ")", tok)) return Tok::error;
      return lex_.read_item(tok);
    }
    if (name == "__print_array") {
      arg->kind = K::int_array;
      if (!process_delim_arg(arg->left, ",", tok) || !process_delim_arg(arg->right, ",", tok) ||
          !process_delim_arg(arg->third, ")", tok))
        return Tok::error;
      return lex_.read_item(tok);
    }
    if (name == "__get_str" || name == "__get_rel_str" || name == "__get_bitmask" || name == "__get_rel_bitmask" ||
        name == "__get_cpumask" || name == "__get_rel_cpumask") {
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->kind = name.find("str") != std::string::npos    ? K::string
                  : name.find("cpumask") != std::string::npos ? K::cpumask
                                                              : K::bitmask;
      arg->text = tok;
      arg->field = find_any_field(tok);
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read(tok);
    }
    if (name == "__get_dynamic_array" || name == "__get_rel_dynamic_array" || name == "__get_sockaddr" ||
        name == "__get_sockaddr_rel") {
      arg->kind = K::dyn_array;
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->text = tok;
      arg->field = find_field(tok);
      if (arg->field < 0) return err(fmt::format("{}: no field {}", name, tok));
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      t = lex_.read_item(tok);
      if (t != Tok::op || tok != "[") return t;
      // libtraceevent 1.7.1 rejects an index here (its check is inverted).
      return err(fmt::format("{}({})[...] is not supported", name, arg->text));
    }
    if (name == "__get_dynamic_array_len" || name == "__get_rel_dynamic_array_len") {
      if (lex_.read(tok) != Tok::item) return err(fmt::format("{}: expected a field name", name));
      arg->kind = K::dyn_array_len;
      arg->text = tok;
      arg->field = find_field(tok);
      if (arg->field < 0) return err(fmt::format("{}: no field {}", name, tok));
      Tok t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read(tok);
    }
    if (name == "__builtin_expect") {
      Tok t = process_arg(arg, tok);
      if (t != Tok::delim || tok != ",") return err("__builtin_expect: expected `,`");
      if (lex_.read(tok) != Tok::item) return err("__builtin_expect: expected a value");
      t = lex_.read(tok);
      if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
      return lex_.read_item(tok);
    }
    if (name == "sizeof") return process_sizeof(arg, tok);
    if (const HelperFunction* h = find_helper(name)) {
      // process_func_handler: each argument is one operand (no operators).
      arg->kind = K::func;
      arg->text = name;
      for (int i = 0; i < h->nr_args; ++i) {
        auto farg = std::make_unique<Node>();
        Tok t = process_arg(farg.get(), tok);
        std::string_view want = i < h->nr_args - 1 ? "," : ")";
        if (t != Tok::delim || tok != want)
          return err(fmt::format("function '{}()' expects {} arguments", name, h->nr_args));
        arg->args.push_back(std::move(farg));
      }
      return lex_.read(tok);
    }
    return err(fmt::format("function {} not defined", name));
  }

  Tok process_sizeof(Node* arg, std::string& tok) {
    Tok t = lex_.read_item(tok);
    bool token_has_paren = false;
    std::string size;
    if (tok == "unsigned") {
      t = lex_.read_item(tok);
      if (t == Tok::error) return t;
      if (t != Tok::item) token_has_paren = true;
    }
    if (token_has_paren || tok == "int") {
      size = "4";
    } else if (tok == "long") {
      t = lex_.read_item(tok);
      if (tok == "long") {
        size = "8";
      } else {
        // The kernel's long is not known while parsing; trace.dat files
        // from 64-bit kernels are what we read.
        size = "8";
        token_has_paren = true;
      }
    } else if (tok == "REC") {  // 1.7.1 knows no sizeof(u64) & co.
      t = lex_.read_item(tok);
      if (!expect(t, tok, Tok::op, "->")) return Tok::error;
      if (lex_.read(tok) != Tok::item) return err("sizeof(REC->...): expected a field");
      int f = find_any_field(tok);
      if (f < 0 || ev_.fields[f].has(kFieldArray)) return err(fmt::format("sizeof(REC->{}) unsupported", tok));
      size = std::to_string(ev_.fields[f].size);
    } else {
      return err(fmt::format("sizeof({}) unsupported", tok));
    }
    *arg = std::move(*make_atom(size));
    if (!token_has_paren) t = lex_.read_item(tok);
    if (!expect(t, tok, Tok::delim, ")")) return Tok::error;
    return lex_.read_item(tok);
  }

  // consolidate_op_arg: fold operations on two constants (unsigned).
  void consolidate(Node* a) {
    if (a->kind != K::op) return;
    if (a->left) consolidate(a->left.get());
    if (a->right) consolidate(a->right.get());
    if (!a->left || !a->right || a->left->kind != K::atom || a->right->kind != K::atom) return;
    uint64_t l = c_strtoull(a->left->text), r = c_strtoull(a->right->text), v;
    const std::string& op = a->text;
    switch (op[0]) {
      case '>':
        v = op.size() > 1 && op[1] == '>' ? l >> (r & 63) : op.size() > 1 && op[1] == '=' ? l >= r : l > r;
        break;
      case '<':
        v = op.size() > 1 && op[1] == '<' ? l << (r & 63) : op.size() > 1 && op[1] == '=' ? l <= r : l < r;
        break;
      case '&': v = op.size() > 1 ? (l && r) : (l & r); break;
      case '|': v = op.size() > 1 ? (l || r) : (l | r); break;
      case '-': v = l - r; break;
      case '+': v = l + r; break;
      case '*': v = l * r; break;
      case '^': v = l ^ r; break;
      case '/': v = r ? l / r : 0; break;
      case '%': v = r ? l % r : 0; break;
      case '=': v = l == r; break;
      case '!': v = l != r; break;
      default: return;
    }
    *a = std::move(*make_atom(std::to_string(static_cast<long long>(v))));
  }

  // Parsing and evaluating recurse; a hostile format must not exhaust the
  // stack. Real formats need a few dozen levels (long `|` chains of flags).
  static constexpr int kMaxDepth = 200;  // ASan frames are large: 1000 overflowed an 8 MiB stack
  struct Depth {
    explicit Depth(Parser* p) : p_(p) { ++p_->depth_; }
    ~Depth() { --p_->depth_; }
    bool too_deep() const { return p_->depth_ > kMaxDepth; }
    Parser* p_;
  };

  Lexer lex_;
  const EventFormat& ev_;
  std::string error_;
  int depth_ = 0;
};

// ------------------------------------------------------------- evaluator ----

// strnlen that accepts the null pointer of an empty span.
size_t text_len(const void* s, size_t max) { return s && max ? strnlen(static_cast<const char*>(s), max) : 0; }

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

// Whether a printf format takes its width or precision from an argument.
bool takes_star(const std::string& format) { return format.find('*') != std::string::npos; }

// print_str_to_seq with a string that may not be NUL-terminated in the record.
// libtraceevent leaves out a negative `*` argument, which is undefined
// behaviour in printf; we pass it (printf then ignores it) and stay defined.
void append_str(TextOut& out, const std::string& format, int len_arg, const char* s, size_t max) {
  size_t n = text_len(s, max);
  if (!n) s = "";
  if (format == "%s"sv) {  // the common case, without a copy
    out.append(s, n);
    return;
  }
  // "%Ns" and "%-Ns" (osnoise and timerlat events): padded by hand.
  const bool left = format.size() > 2 && format[1] == '-';
  size_t width = 0, i = left ? 2 : 1;
  for (; i < format.size() && format[i] >= '0' && format[i] <= '9' && width < 4096; ++i)
    width = width * 10 + static_cast<size_t>(format[i] - '0');
  if (i + 1 == format.size() && format[i] == 's' && i > (left ? 2u : 1u) && format[1] != '0') {
    if (!left) {
      append_right(out, std::string_view(s, n), width);
    } else {
      out.append(s, n);
      if (n < width) out.append(width - n, ' ');
    }
    return;
  }
  thread_local std::string scratch;
  scratch.assign(s, n);
  if (takes_star(format))
    appendf(out, format.c_str(), len_arg, scratch.c_str());
  else
    appendf(out, format.c_str(), scratch.c_str());
}

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

  uint64_t atom_value(const Node* n) const {
    if (n->number) return n->number;
    if (!n->text.empty() && c_isdigit(static_cast<unsigned char>(n->text[0]))) return 0;
    // test_for_symbol: an identifier that names a kernel function.
    return n->symbol.get([&] { return ctx.symbol_address(n->text).value_or(0); });
  }

  // A plugin helper: prints into `out` when given, returns its value.
  // A plugin helper's value: jiffies_to_msecs returns its argument, the others 0.
  uint64_t call_value(const Node* a) const {
    const uint64_t v = a->args.empty() ? 0 : num(a->args[0].get());
    return a->text == "jiffies_to_msecs"sv ? v : 0;
  }

  // A plugin helper's text.
  void call(const Node* a, TextOut& out) const {
    const uint64_t v = a->args.empty() ? 0 : num(a->args[0].get());
    if (a->text == "jiffies_to_msecs"sv) {
      append_int(out, static_cast<int64_t>(v));
    } else if (a->text == "jbd2_dev_to_name"sv) {
      uint32_t dev = static_cast<uint32_t>(v);
      appendf(out, "%d:%d", static_cast<int>(dev >> 20), static_cast<int>(dev & ((1u << 20) - 1)));
    } else if (a->text == "xen_hypercall_name"sv) {
      out.append(xen_hypercall_name(v));
    }
  }

  // A K::field node's value (0 when the record is too short for it).
  uint64_t field_number(const Node* a) const {
    const Field* f = field(a);
    if (!f || size_t(f->offset) + f->size > data.size()) return 0;
    return load_uint(data.data() + f->offset, f->size, e);
  }

  uint64_t num(const Node* a) const {
    switch (a->kind) {
      case K::null: return 0;
      case K::atom: return atom_value(a);
      case K::field: return field_number(a);
      case K::type:
        return num(a->left.get()) & a->cast_mask.get([&] { return eval_type_str(~uint64_t{0}, a->text, false); });
      case K::dyn_array_len: {
        uint32_t off, len;
        dynamic_offset(*field(a), off, len);
        return len;
      }
      case K::dyn_array: {
        // libtraceevent yields a host pointer here; the offset is the
        // closest stable stand-in.
        uint32_t off, len;
        dynamic_offset(*field(a), off, len);
        return off;
      }
      case K::op: return num_op(a);
      case K::func: return call_value(a);
      default: return 0;
    }
  }

  uint64_t num_op(const Node* a) const {
    const std::string& op = a->text;
    if (op == "["sv) {
      uint64_t right = num(a->right.get());
      const Node* larg = a->left.get();
      const Node* typearg = nullptr;
      while (larg->kind == K::type) {
        if (!typearg) typearg = larg;
        larg = larg->left.get();
      }
      uint64_t field_size = ctx.long_size;
      uint64_t offset;
      if (larg->kind == K::dyn_array) {
        uint32_t off, len;
        dynamic_offset(*field(larg), off, len);
        offset = off + right;
        if (field(larg)->elem_size) field_size = field(larg)->elem_size;
      } else if (larg->kind == K::field) {
        const Field* f = field(larg);
        if (!f) return 0;
        field_size = f->elem_size;
        if (!field_size && f->has(kFieldLong)) field_size = ctx.long_size;
        offset = f->offset + right * field_size;
      } else {
        return default_op(a);
      }
      if (offset + field_size > data.size()) return 0;
      uint64_t val = load_uint(data.data() + offset, field_size, e);
      if (typearg) val = eval_type_str(val, typearg->text, true);
      return val;
    }
    if (op == "?"sv) {
      uint64_t cond = num(a->left.get());
      const Node* colon = a->right.get();
      return cond ? num(colon->left.get()) : num(colon->right.get());
    }
    return default_op(a);
  }

  uint64_t default_op(const Node* a) const {
    uint64_t l = num(a->left.get()), r = num(a->right.get());
    const std::string& op = a->text;
    char c1 = op.size() > 1 ? op[1] : 0;
    switch (op[0]) {
      case '!': return c1 == 0 ? !r : c1 == '=' ? l != r : 0;
      case '~': return ~r;
      case '|': return c1 ? (l || r) : (l | r);
      case '&': return c1 ? (l && r) : (l & r);
      case '<': return c1 == 0 ? l < r : c1 == '<' ? l << (r & 63) : c1 == '=' ? l <= r : 0;
      case '>': return c1 == 0 ? l > r : c1 == '>' ? l >> (r & 63) : c1 == '=' ? l >= r : 0;
      case '=': return c1 == '=' ? l == r : 0;
      case '-': return l - r;
      case '+': return l + r;
      case '/': return r ? l / r : 0;
      case '%': return r ? l % r : 0;
      case '*': return l * r;
      default: return 0;  // includes '^': libtraceevent warns "unknown op" and yields 0
    }
  }

  // print_str_arg
  void str(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
    switch (a->kind) {
      case K::atom:
      case K::bstring:
        append_str(out, format, len_arg, a->text.c_str(), a->text.size());
        return;
      case K::field: {
        const Field* f = field(a);
        if (!f || f->offset > data.size()) return;
        size_t len = f->size ? f->size : data.size() - f->offset;
        if (!f->has(kFieldArray) && f->size == ctx.long_size) {
          // A pointer: maybe to a string the kernel registered.
          uint64_t addr = read_number(f->offset, ctx.long_size);
          if (auto s = ctx.printk_format(addr))
            out.append(*s);
          else
            appendf(out, "%llx", static_cast<unsigned long long>(addr));
          return;
        }
        len = std::min(len, data.size() - f->offset);
        append_str(out, format, len_arg, reinterpret_cast<const char*>(data.data()) + f->offset, len);
        return;
      }
      case K::flags: {
        long long val = static_cast<long long>(num(a->left.get()));
        bool printed = false;
        for (const FlagSym& fl : a->syms) {
          if (!val && fl.value < 0) {
            append_str(out, format, len_arg, fl.str.c_str(), fl.str.size());
            break;
          }
          if (fl.value > 0 && (val & fl.value) == fl.value) {
            if (printed && a->has_delim) out += a->text;
            append_str(out, format, len_arg, fl.str.c_str(), fl.str.size());
            printed = true;
            val &= ~fl.value;
          }
        }
        if (val) {
          if (printed && a->has_delim) out += a->text;
          out += "0x"sv;
          append_hex(out, static_cast<uint64_t>(val));
        }
        return;
      }
      case K::symbol: {
        long long val = static_cast<long long>(num(a->left.get()));
        for (const FlagSym& fl : a->syms) {
          if (val == fl.value) {
            append_str(out, format, len_arg, fl.str.c_str(), fl.str.size());
            return;
          }
        }
        out += "0x"sv;
        append_hex(out, static_cast<uint64_t>(val));
        return;
      }
      case K::hex:
      case K::hex_str: {
        size_t off;
        if (a->left->kind == K::dyn_array) {
          uint32_t o, l;
          dynamic_offset(*field(a->left.get()), o, l);
          off = o;
        } else if (const Field* f = a->left->kind == K::field ? field(a->left.get()) : nullptr) {
          off = f->offset;
        } else {
          return;
        }
        uint64_t len = num(a->right.get());
        for (uint64_t i = 0; i < len && off + i < data.size(); ++i) {
          if (i && a->kind == K::hex) out += ' ';
          append_hex(out, data[off + i], 2);
        }
        return;
      }
      case K::int_array: {
        size_t off;
        if (a->left->kind == K::dyn_array) {
          uint32_t o, l;
          dynamic_offset(*field(a->left.get()), o, l);
          off = o;
        } else if (const Field* f = a->left->kind == K::field ? field(a->left.get()) : nullptr) {
          off = f->offset;
        } else {
          return;
        }
        // 1.7.1 prints the elements in decimal, space-separated, in host order.
        uint64_t len = num(a->right.get());
        uint64_t el = num(a->third.get());
        for (uint64_t i = 0; i < len; ++i) {
          if (i) out += ' ';
          if (el == 1 || el == 2 || el == 4 || el == 8) {
            append_uint(out, off + el <= data.size() ? load_uint(data.data() + off, el, host_endian()) : 0);
          } else {
            appendf(out, "BAD SIZE:%d 0x%x", static_cast<int>(el), static_cast<unsigned>(read_number(off, 1)));
            el = 1;
          }
          off += el;
          if (off > data.size()) break;
        }
        return;
      }
      case K::string: {
        const Field* f = field(a);
        if (!f) return;
        uint32_t off, len;
        dynamic_offset(*f, off, len);
        if (!len || off >= data.size()) return;  // zero-length dynamic strings print nothing
        append_str(out, format, len_arg, reinterpret_cast<const char*>(data.data()) + off, data.size() - off);
        return;
      }
      case K::bitmask:
      case K::cpumask: {
        const Field* f = field(a);
        if (!f) return;
        uint32_t off, len;
        dynamic_offset(*f, off, len);
        if (off > data.size()) return;
        len = static_cast<uint32_t>(std::min<size_t>(len, data.size() - off));
        thread_local std::string mask;
        mask.clear();
        if (a->kind == K::bitmask)
          bitmask_text(data.data() + off, len, mask);
        else
          cpumask_text(data.data() + off, len, mask);
        if (takes_star(format))
          appendf(out, format.c_str(), len_arg, mask.c_str());
        else
          appendf(out, format.c_str(), mask.c_str());
        return;
      }
      case K::op:
        if (a->text != "?"sv) return;
        if (num(a->left.get()))
          str(out, format, len_arg, a->right->left.get());
        else
          str(out, format, len_arg, a->right->right.get());
        return;
      case K::func:
        call(a, out);  // the helper prints; the conversion's width is not used
        return;
      default:
        return;  // casts, dynamic arrays, ... print nothing as a string
    }
  }

  // print_bitmask_to_seq: hex, most significant byte first, a comma every 32 bits.
  void bitmask_text(const uint8_t* p, uint32_t size, std::string& s) const {
    int nr_bits = static_cast<int>(size) * 8;
    int str_size = (nr_bits + 3) / 4 + (nr_bits - 1) / 32;
    if (str_size <= 0) return;
    s.assign(str_size, '\0');
    int len = 0;
    static constexpr char kHex[] = "0123456789abcdef";
    for (int i = str_size - 2; i >= 0; i -= 2) {
      int index = e == Endian::big ? static_cast<int>(size) - (len + 1) : len;
      uint8_t b = p[index];
      s[i] = kHex[b >> 4];
      s[i + 1] = kHex[b & 15];
      len++;
      if (!(len & 3) && i > 0) {
        i--;
        s[i] = ',';
      }
    }
  }

  // print_cpumask_to_seq: ranges of set bits, "0-3,8".
  void cpumask_text(const uint8_t* p, uint32_t size, std::string& s) const {
    int firstone = -1, firstzero = -1;
    int nr_bits = static_cast<int>(size) * 8;
    bool first = true;
    for (int i = 0; i < static_cast<int>(size); i++) {
      int index = e == Endian::big ? static_cast<int>(size) - (i + 1) : i;
      unsigned byte = p[index];
      for (;;) {
        if (firstone < 0 && byte) {
          firstone = __builtin_ffs(byte) - 1;
          byte |= (1u << firstone) - 1;
          firstone += i * 8;
        }
        if (firstone < 0) break;
        if ((~byte) & 0xff) {
          firstzero = __builtin_ffs(~byte & 0xff) - 1;
          byte &= ~((1u << firstzero) - 1);
          firstzero += i * 8;
        } else if (i == static_cast<int>(size) - 1) {
          firstzero = nr_bits;
          byte = 0;
        } else {
          break;
        }
        if (!first) s += ',';
        first = false;
        s += std::to_string(firstone);
        if (firstzero > firstone + 1) {
          s += '-';
          s += std::to_string(firstzero - 1);
        }
        firstzero = firstone = -1;
        if (!byte) break;
      }
    }
  }

  // print_function: %pS %ps %pF %pf. (1.7.1 prints the same in -R mode.)
  void function(TextOut& out, char conv, uint64_t val) const {
    auto sym = ctx.lookup_symbol(val);
    if (sym) {
      out.append(sym->name);
      if (conv == 'F' || conv == 'S') {
        out += "+0x"sv;  // "+0x%llx"
        append_hex(out, val - sym->address);
      }
      return;
    }
    out += "0x"sv;  // "0x%lx" of the sign-extended int, or "0x%llx"
    append_hex(out, ctx.long_size == 4 ? static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(val))) : val);
  }

  const Node* strip_casts(const Node* a) const {
    while (a->kind == K::type) a = a->left.get();
    return a;
  }

  void ip4(TextOut& out, char i, bool reverse, const uint8_t* b) const {
    const char* f = i == 'i' ? "%03d.%03d.%03d.%03d" : "%d.%d.%d.%d";
    if (reverse)
      appendf(out, f, b[3], b[2], b[1], b[0]);
    else
      appendf(out, f, b[0], b[1], b[2], b[3]);
  }

  void ip6(TextOut& out, char i, const uint8_t* b) const {
    for (int j = 0; j < 16; j += 2) {
      appendf(out, "%02x%02x", b[j], b[j + 1]);
      if (i == 'I' && j < 14) out += ':';
    }
  }

  void ip6c(TextOut& out, const uint8_t* a) const {
    auto word = [&](int k) { return static_cast<uint16_t>(a[2 * k] << 8 | a[2 * k + 1]); };
    bool v4mapped = !(word(0) | word(1) | word(2) | word(3) | word(4)) && word(5) == 0xffff;
    bool isatap = (((a[8] | 0x02) == 0x02) && a[9] == 0 && a[10] == 0x5e && a[11] == 0xfe);
    bool use4 = v4mapped || isatap;
    int range = use4 ? 6 : 8;
    int zerolength[8] = {};
    int longest = 1, colonpos = -1;
    for (int i = 0; i < range; i++)
      for (int j = i; j < range && word(j) == 0; j++) zerolength[i]++;
    for (int i = 0; i < range; i++)
      if (zerolength[i] > longest) {
        longest = zerolength[i];
        colonpos = i;
      }
    if (longest == 1) colonpos = -1;
    bool needcolon = false;
    for (int i = 0; i < range; i++) {
      if (i == colonpos) {
        if (needcolon || i == 0) out += ':';
        out += ':';
        needcolon = false;
        i += longest - 1;
        continue;
      }
      if (needcolon) {
        out += ':';
        needcolon = false;
      }
      uint16_t w = word(i);
      if (w >> 8)
        appendf(out, "%x%02x", w >> 8, w & 0xff);
      else
        appendf(out, "%x", w & 0xff);
      needcolon = true;
    }
    if (use4) {
      if (needcolon) out += ':';
      ip4(out, 'I', false, a + 12);
    }
  }

  int ip4_args(const char* p, bool& reverse) const {
    reverse = false;
    switch (*p) {
      case 'h': reverse = e != Endian::big; return 1;
      case 'l': reverse = true; return 1;
      case 'n': case 'b': return 1;
      default: return 0;
    }
  }

  // print_arg_pointer for the conversions that look at a field's bytes.
  void pointer(TextOut& out, const std::string& format, int plen, const Node* arg) const {
    if (arg->kind == K::bstring) {
      out += arg->text;
      return;
    }
    const char* f = format.c_str();
    while (*f && *f != 'p') ++f;
    if (*f) ++f;
    switch (*f) {
      case 'F': case 'f': case 'S': case 's':
        function(out, *f, num(arg));
        return;
      case 'M': case 'm': {
        const Node* a = strip_casts(arg);
        if (a->kind != K::field) {
          appendf(out, "ARG TYPE NOT FIELD BUT %d", static_cast<int>(a->kind));
          return;
        }
        const Field* fd = field(a);
        if (!fd) return;
        if (fd->size != 6 || size_t(fd->offset) + 6 > data.size()) {
          out += "INVALIDMAC"sv;
          return;
        }
        const char* mf = "%.2x:%.2x:%.2x:%.2x:%.2x:%.2x";
        if (f[0] == 'm') mf = "%.2x%.2x%.2x%.2x%.2x%.2x";
        else if (f[0] == 'M' && f[1] == 'F') mf = "%.2x-%.2x-%.2x-%.2x-%.2x-%.2x";
        const uint8_t* b = data.data() + fd->offset;
        if (f[1] == 'R')
          appendf(out, mf, b[5], b[4], b[3], b[2], b[1], b[0]);
        else
          appendf(out, mf, b[0], b[1], b[2], b[3], b[4], b[5]);
        return;
      }
      case 'I': case 'i':
        ip(out, f, arg);
        return;
      case 'U': {
        static constexpr int kGuid[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
        const char* uf = "%02x";
        bool guid = false;
        if (f[1] == 'L' || f[1] == 'B') uf = "%02X";
        if (f[1] == 'L' || f[1] == 'l') guid = true;
        const Node* a = strip_casts(arg);
        if (a->kind != K::field) {
          appendf(out, "ARG TYPE NOT FIELD BUT %d", static_cast<int>(a->kind));
          return;
        }
        const Field* fd = field(a);
        if (!fd) return;
        if (fd->size != 16 || size_t(fd->offset) + 16 > data.size()) {
          out += "INVALIDUUID"sv;
          return;
        }
        const uint8_t* b = data.data() + fd->offset;
        for (int i = 0; i < 16; i++) {
          appendf(out, uf, b[guid ? kGuid[i] : i]);
          if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
        }
        return;
      }
      case 'h': {
        const char* delim = " ";
        if (f[1] == 'C') delim = ":";
        else if (f[1] == 'D') delim = "-";
        else if (f[1] == 'N') delim = "";
        if (arg->kind != K::dyn_array) {
          appendf(out, "ARG TYPE NOT FIELD BUT %d", static_cast<int>(arg->kind));
          return;
        }
        uint32_t off, len;
        dynamic_offset(*field(arg), off, len);
        // C compares unsigned here: a negative length means "all of it".
        int n = plen;
        if (len < static_cast<uint32_t>(plen)) n = static_cast<int>(len);
        if (n < 1 || off >= data.size()) return;
        append_hex(out, data[off], 2);
        for (int i = 1; i < n && off + i < data.size(); i++) {
          out += delim;
          append_hex(out, data[off + i], 2);
        }
        return;
      }
      default:
        if (format.size() == 2 && format[0] == '%') {  // "%p": glibc's, by hand: "(nil)" or 0x and hex
          const uint64_t v = num(arg);
          if (v == 0) {
            out += "(nil)"sv;
          } else {
            out += "0x"sv;
            append_hex(out, static_cast<uintptr_t>(v));
          }
          return;
        }
        appendf(out, "%p", reinterpret_cast<void*>(static_cast<uintptr_t>(num(arg))));
        return;
    }
  }

  void ip(TextOut& out, const char* p, const Node* arg) const {
    char i = *p++;
    const Node* a = strip_casts(arg);
    if (*p == '4' || *p == '6') {
      if (a->kind != K::field) {
        appendf(out, "ARG TYPE NOT FIELD BUT %d", static_cast<int>(a->kind));
        return;
      }
      const Field* fd = field(a);
      if (!fd) return;
      if (*p == '4') {
        bool reverse;
        ip4_args(p + 1, reverse);
        if (fd->size != 4 || size_t(fd->offset) + 4 > data.size()) {
          out += "INVALIDIPv4"sv;
          return;
        }
        ip4(out, i, reverse, data.data() + fd->offset);
      } else {
        if (fd->size != 16 || size_t(fd->offset) + 16 > data.size()) {
          out += "INVALIDIPv6"sv;
          return;
        }
        if (i == 'I' && p[1] == 'c')
          ip6c(out, data.data() + fd->offset);
        else
          ip6(out, i, data.data() + fd->offset);
      }
      return;
    }
    if (*p != 'S') return;
    // %pIS[p][c][hnbl]: a struct sockaddr.
    ++p;
    bool have_p = false, have_c = false, reverse = false;
    if (i == 'I') {
      if (*p == 'p') { have_p = true; ++p; }
      if (*p == 'c') { have_c = true; ++p; }
    }
    ip4_args(p, reverse);
    uint32_t off, len;
    if (a->kind == K::field) {
      const Field* fd = field(a);
      if (!fd) return;
      off = fd->offset;
      len = fd->size;
    } else if (a->kind == K::dyn_array) {
      dynamic_offset(*field(a), off, len);
    } else {
      appendf(out, "ARG NOT FIELD NOR DYNAMIC ARRAY BUT TYPE %d", static_cast<int>(a->kind));
      return;
    }
    if (size_t(off) + 2 > data.size()) return;
    const uint8_t* sa = data.data() + off;
    uint16_t family = static_cast<uint16_t>(load_uint(sa, 2, host_endian()));
    if (family == 2) {  // AF_INET
      if (len < 16 || size_t(off) + 16 > data.size()) {
        out += "INVALIDIPv4"sv;
        return;
      }
      ip4(out, i, reverse, sa + 4);
      if (have_p) appendf(out, ":%d", sa[2] << 8 | sa[3]);
    } else if (family == 10) {  // AF_INET6
      if (len < 28 || size_t(off) + 28 > data.size()) {
        out += "INVALIDIPv6"sv;
        return;
      }
      if (have_p) out += '[';
      if (have_c)
        ip6c(out, sa + 8);
      else
        ip6(out, i, sa + 8);
      if (have_p) appendf(out, "]:%d", sa[2] << 8 | sa[3]);
    }
  }

  void number(TextOut& out, const Segment& s, int len_arg, uint64_t val) const {
    if (s.fast_conv)
      append_fast_number(out, s, val);
    else
      number_by_printf(out, s, len_arg, val);
  }

  [[gnu::noinline]] void number_by_printf(TextOut& out, const Segment& s, int len_arg, uint64_t val) const {
    const char* f = s.format.c_str();
    int plen = takes_star(s.format) ? len_arg : -1;
    switch (s.ls) {
      case -2:
        plen >= 0 ? appendf(out, f, plen, static_cast<char>(val)) : appendf(out, f, static_cast<char>(val));
        break;
      case -1:
        plen >= 0 ? appendf(out, f, plen, static_cast<short>(val)) : appendf(out, f, static_cast<short>(val));
        break;
      case 0:
        plen >= 0 ? appendf(out, f, plen, static_cast<int>(val)) : appendf(out, f, static_cast<int>(val));
        break;
      case 1:
        plen >= 0 ? appendf(out, f, plen, static_cast<long>(val)) : appendf(out, f, static_cast<long>(val));
        break;
      case 2:
        plen >= 0 ? appendf(out, f, plen, static_cast<long long>(val))
                  : appendf(out, f, static_cast<long long>(val));
        break;
      default:
        break;
    }
  }

  // print_parse_data for one segment of a parsed print fmt.
  void segment(TextOut& out, const Segment& s, const std::vector<NodePtr>& args) const {
    int len_arg = s.len_arg >= 0 ? static_cast<int>(num(args[s.len_arg].get())) : -1;
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
};

bool is_printable_array(const uint8_t* p, size_t len) {
  for (size_t i = 0; i < len && p[i]; i++)
    if (!c_isprint(p[i]) && !c_isspace(p[i])) return false;
  return true;
}

// ------------------------------------------------------------------ bprint ----

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

  auto it = cache.find(fmt_addr);
  if (it == cache.end()) {
    BprintFormat f;
    if (auto s = ctx.printk_format(fmt_addr))
      f.text = fmt::format("%ps: {}", *s);
    else
      f.text = fmt::format("%ps: (NO FORMAT FOUND at {:x})\n", fmt_addr);
    it = cache.emplace(fmt_addr, std::move(f)).first;
  }
  const std::string& text = it->second.text;

  constexpr size_t kMaxArgs = 64;
  BArg args[kMaxArgs];
  args[0] = BArg{false, ip, {}};
  size_t nargs = 1 + decode_bprint_args(std::string_view(text).substr(5), data, buf_field->offset, ctx, args + 1,
                                        kMaxArgs - 1);
  auto seg_it = it->second.by_nargs.find(nargs);
  if (seg_it == it->second.by_nargs.end())
    seg_it = it->second.by_nargs.emplace(nargs, build_segments(text, static_cast<int>(nargs))).first;
  const SegmentList& segs = seg_it->second;
  if (segs.failed) failed = true;  // this record still prints; later ones do not

  Eval ev{data, event, ctx, ctx.endian};
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
  Eval ev{record.data, event, ctx, ctx.endian};
  for (const Segment& s : segments.segs) ev.segment(out, s, args);
}

// print_field_raw. A string field whose bytes once were not printable
// prints as ARRAY[...] from then on: libtraceevent clears its string flag.
// The record's bytes followed by the rest of its sub-buffer, when known:
// libtraceevent prints a fixed array of a short record with what follows it.
Bytes widened(const Record& record) {
  const uint8_t* b = record.sub_buffer.data();
  const uint8_t* e = b + record.sub_buffer.size();
  const uint8_t* d = record.data.data();
  if (!b || !d || d < b || d + record.data.size() > e) return record.data;
  return Bytes(d, static_cast<size_t>(e - d));
}

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
  Parser parser(text, event);
  Status st = parser.parse(impl->format_text, impl->args);
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

void format_bprint(const Record& record, const EventFormat& event, const TraceContext& ctx, TextOut& out) {
  BprintCache cache;
  bool failed = false;
  print_bprint(record, event, ctx, out, cache, failed);
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

}  // namespace tracebed
