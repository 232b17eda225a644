// Evaluation of a parsed print fmt against one record, as libtraceevent
// 1.7.1's print_parse_data / eval_num_arg / print_str_arg do: field values
// are read zero-extended (printf's cast does the sign), casts only mask,
// `^` evaluates to 0, %s of a long-sized scalar prints a printk string or
// bare hex, and __print_array prints decimal in host byte order.
#include <algorithm>

#include "framework/decode/print_fmt_internal.h"
#include "framework/decode/print_fmt_lexer.h"

namespace tracebed::decode::print_fmt {

using namespace std::string_view_literals;

namespace {

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


// print_bitmask_to_seq: hex, most significant byte first, a comma every 32 bits.
void bitmask_text(const uint8_t* p, uint32_t size, Endian e, std::string& s) {
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
void cpumask_text(const uint8_t* p, uint32_t size, Endian e, std::string& s) {
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

}  // namespace

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

uint64_t Eval::atom_value(const Node* n) const {
  if (n->number) return n->number;
  if (!n->text.empty() && c_isdigit(static_cast<unsigned char>(n->text[0]))) return 0;
  // test_for_symbol: an identifier that names a kernel function.
  return n->symbol.get([&] { return ctx.symbol_address(n->text).value_or(0); });
}

// A plugin helper's value: jiffies_to_msecs returns its argument, the others 0.
uint64_t Eval::call_value(const Node* a) const {
  const uint64_t v = a->args.empty() ? 0 : num(a->args[0].get());
  return a->text == "jiffies_to_msecs"sv ? v : 0;
}

// A plugin helper's text.
void Eval::call(const Node* a, TextOut& out) const {
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

uint64_t Eval::num(const Node* a) const {
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

uint64_t Eval::num_op(const Node* a) const {
  const std::string& op = a->text;
  if (op == "["sv) return index_op(a);
  if (op == "?"sv) {
    uint64_t cond = num(a->left.get());
    const Node* colon = a->right.get();
    return cond ? num(colon->left.get()) : num(colon->right.get());
  }
  return default_op(a);
}

// field[index], of a fixed or dynamic array, maybe cast.
uint64_t Eval::index_op(const Node* a) const {
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

uint64_t Eval::default_op(const Node* a) const {
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
void Eval::str(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
  switch (a->kind) {
    case K::atom:
    case K::bstring:
      append_str(out, format, len_arg, a->text.c_str(), a->text.size());
      return;
    case K::field: return str_field(out, format, len_arg, a);
    case K::flags: return str_flags(out, format, len_arg, a);
    case K::symbol: return str_symbol(out, format, len_arg, a);
    case K::hex:
    case K::hex_str:
      return str_hex(out, a);
    case K::int_array: return str_int_array(out, a);
    case K::string: return str_dynamic(out, format, len_arg, a);
    case K::bitmask:
    case K::cpumask:
      return str_mask(out, format, len_arg, a);
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

// REC->field as a string: its bytes, or, for a long-sized scalar, the
// printk string at that address or the address in hex.
void Eval::str_field(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
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
}

// __print_flags: the names of the bits set, then what is left in hex.
void Eval::str_flags(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
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
}

// __print_symbolic: the value's name, or the value in hex.
void Eval::str_symbol(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
  long long val = static_cast<long long>(num(a->left.get()));
  for (const FlagSym& fl : a->syms) {
    if (val == fl.value) {
      append_str(out, format, len_arg, fl.str.c_str(), fl.str.size());
      return;
    }
  }
  out += "0x"sv;
  append_hex(out, static_cast<uint64_t>(val));
}

// Where the array __print_hex & co. print starts: a dynamic array's data
// or a field's offset. False for any other argument (nothing is printed).
bool Eval::array_start(const Node* a, size_t& off) const {
  if (a->kind == K::dyn_array) {
    uint32_t o, l;
    dynamic_offset(*field(a), o, l);
    off = o;
    return true;
  }
  if (const Field* f = a->kind == K::field ? field(a) : nullptr) {
    off = f->offset;
    return true;
  }
  return false;
}

// __print_hex (bytes space-separated) and __print_hex_str (run together).
void Eval::str_hex(TextOut& out, const Node* a) const {
  size_t off;
  if (!array_start(a->left.get(), off)) return;
  uint64_t len = num(a->right.get());
  for (uint64_t i = 0; i < len && off + i < data.size(); ++i) {
    if (i && a->kind == K::hex) out += ' ';
    append_hex(out, data[off + i], 2);
  }
}

// __print_array: 1.7.1 prints the elements in decimal, space-separated, in
// host order.
void Eval::str_int_array(TextOut& out, const Node* a) const {
  size_t off;
  if (!array_start(a->left.get(), off)) return;
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
}

// __get_str: the dynamic string, up to its NUL or the record's end.
void Eval::str_dynamic(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
  const Field* f = field(a);
  if (!f) return;
  uint32_t off, len;
  dynamic_offset(*f, off, len);
  if (!len || off >= data.size()) return;  // zero-length dynamic strings print nothing
  append_str(out, format, len_arg, reinterpret_cast<const char*>(data.data()) + off, data.size() - off);
}

// __get_bitmask and __get_cpumask, through the conversion's printf format.
void Eval::str_mask(TextOut& out, const std::string& format, int len_arg, const Node* a) const {
  const Field* f = field(a);
  if (!f) return;
  uint32_t off, len;
  dynamic_offset(*f, off, len);
  if (off > data.size()) return;
  len = static_cast<uint32_t>(std::min<size_t>(len, data.size() - off));
  thread_local std::string mask;
  mask.clear();
  if (a->kind == K::bitmask)
    bitmask_text(data.data() + off, len, e, mask);
  else
    cpumask_text(data.data() + off, len, e, mask);
  if (takes_star(format))
    appendf(out, format.c_str(), len_arg, mask.c_str());
  else
    appendf(out, format.c_str(), mask.c_str());
}

int Eval::star_width(const Node* a) const {
  return std::clamp(static_cast<int>(num(a)), -kMaxFieldWidth, kMaxFieldWidth);
}

void Eval::number_by_printf(TextOut& out, const Segment& s, int len_arg, uint64_t val) const {
  const char* f = s.format.c_str();
  // A `*` takes its width even when negative (left-aligned): libtraceevent
  // 1.7.1 leaves a negative one out and printf then reads a missing argument.
  const auto print = [&](auto v) { takes_star(s.format) ? appendf(out, f, len_arg, v) : appendf(out, f, v); };
  switch (s.ls) {
    case -2: return print(static_cast<char>(val));
    case -1: return print(static_cast<short>(val));
    case 0: return print(static_cast<int>(val));
    case 1: return print(static_cast<long>(val));
    case 2: return print(static_cast<long long>(val));
    default: return;
  }
}

}  // namespace tracebed::decode::print_fmt
