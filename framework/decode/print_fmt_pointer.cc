// The %p conversions of a print fmt, as libtraceevent 1.7.1's
// print_arg_pointer prints them: %pS & co. as kernel symbols, %pM MACs,
// %pI IPv4/IPv6 addresses and sockaddrs, %pU UUIDs, %ph hex bytes, and a
// plain %p as glibc does.
#include "framework/decode/print_fmt_internal.h"

namespace tracebed::decode::print_fmt {

using namespace std::string_view_literals;

namespace {

const Node* strip_casts(const Node* a) {
  while (a->kind == K::type) a = a->left.get();
  return a;
}


// print_function: %pS %ps %pF %pf. (1.7.1 prints the same in -R mode.)
void function(TextOut& out, const TraceContext& ctx, char conv, uint64_t val) {
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

void ip4(TextOut& out, char i, bool reverse, const uint8_t* b) {
  const char* f = i == 'i' ? "%03d.%03d.%03d.%03d" : "%d.%d.%d.%d";
  if (reverse)
    appendf(out, f, b[3], b[2], b[1], b[0]);
  else
    appendf(out, f, b[0], b[1], b[2], b[3]);
}

void ip6(TextOut& out, char i, const uint8_t* b) {
  for (int j = 0; j < 16; j += 2) {
    appendf(out, "%02x%02x", b[j], b[j + 1]);
    if (i == 'I' && j < 14) out += ':';
  }
}

// %pI6c: RFC 5952 compressed, an IPv4-mapped or ISATAP tail as dotted quad.
void ip6c(TextOut& out, const uint8_t* a) {
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

// The byte order letter after %pI4 / %pIS: h host, n b network, l little.
int ip4_args(const char* p, Endian e, bool& reverse) {
  reverse = false;
  switch (*p) {
    case 'h': reverse = e != Endian::big; return 1;
    case 'l': reverse = true; return 1;
    case 'n': case 'b': return 1;
    default: return 0;
  }
}

}  // namespace

// print_arg_pointer. `plen`: the `*` argument (%*ph), else 1.
void Eval::pointer(TextOut& out, const std::string& format, int plen, const Node* arg) const {
  if (arg->kind == K::bstring) {
    out += arg->text;
    return;
  }
  const char* f = format.c_str();
  while (*f && *f != 'p') ++f;
  if (*f) ++f;
  switch (*f) {
    case 'F': case 'f': case 'S': case 's':
      function(out, ctx, *f, num(arg));
      return;
    case 'M': case 'm':
      mac(out, f, arg);
      return;
    case 'I': case 'i':
      ip(out, f, arg);
      return;
    case 'U':
      uuid(out, f, arg);
      return;
    case 'h':
      hex_bytes(out, f, plen, arg);
      return;
    default:
      plain_pointer(out, format, arg);
      return;
  }
}

// The `size` bytes of the field an argument (casts aside) names, or null
// after printing libtraceevent's complaint: the argument is not a field, or
// the field is not `size` bytes inside the record.
const uint8_t* Eval::field_bytes(TextOut& out, const Node* arg, uint32_t size, std::string_view invalid) const {
  const Node* a = strip_casts(arg);
  if (a->kind != K::field) {
    appendf(out, "ARG TYPE NOT FIELD BUT %d", static_cast<int>(a->kind));
    return nullptr;
  }
  const Field* fd = field(a);
  if (!fd) return nullptr;
  if (fd->size != size || size_t(fd->offset) + size > data.size()) {
    out += invalid;
    return nullptr;
  }
  return data.data() + fd->offset;
}

// %pM %pMR %pMF %pm: six bytes of a field.
void Eval::mac(TextOut& out, const char* f, const Node* arg) const {
  const uint8_t* b = field_bytes(out, arg, 6, "INVALIDMAC"sv);
  if (!b) return;
  const char* mf = "%.2x:%.2x:%.2x:%.2x:%.2x:%.2x";
  if (f[0] == 'm') mf = "%.2x%.2x%.2x%.2x%.2x%.2x";
  else if (f[0] == 'M' && f[1] == 'F') mf = "%.2x-%.2x-%.2x-%.2x-%.2x-%.2x";
  if (f[1] == 'R')
    appendf(out, mf, b[5], b[4], b[3], b[2], b[1], b[0]);
  else
    appendf(out, mf, b[0], b[1], b[2], b[3], b[4], b[5]);
}

// %pU[bBlL]: sixteen bytes of a field; l and L in GUID byte order.
void Eval::uuid(TextOut& out, const char* f, const Node* arg) const {
  static constexpr int kGuid[16] = {3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15};
  const char* uf = "%02x";
  bool guid = false;
  if (f[1] == 'L' || f[1] == 'B') uf = "%02X";
  if (f[1] == 'L' || f[1] == 'l') guid = true;
  const uint8_t* b = field_bytes(out, arg, 16, "INVALIDUUID"sv);
  if (!b) return;
  for (int i = 0; i < 16; i++) {
    appendf(out, uf, b[guid ? kGuid[i] : i]);
    if (i == 3 || i == 5 || i == 7 || i == 9) out += '-';
  }
}

// %ph %phC %phD %phN: up to `plen` bytes of a dynamic array in hex.
void Eval::hex_bytes(TextOut& out, const char* f, int plen, const Node* arg) const {
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
}

// %p and what follows it unknown: printf's %p of the value.
void Eval::plain_pointer(TextOut& out, const std::string& format, const Node* arg) const {
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
}

// %pI4 %pi4 %pI6 %pi6 %pI6c (of a field), %pIS (see ip_sockaddr).
void Eval::ip(TextOut& out, const char* p, const Node* arg) const {
  char i = *p++;
  if (*p == '4') {
    bool reverse;
    ip4_args(p + 1, e, reverse);
    if (const uint8_t* b = field_bytes(out, arg, 4, "INVALIDIPv4"sv)) ip4(out, i, reverse, b);
  } else if (*p == '6') {
    const uint8_t* b = field_bytes(out, arg, 16, "INVALIDIPv6"sv);
    if (!b) return;
    if (i == 'I' && p[1] == 'c')
      ip6c(out, b);
    else
      ip6(out, i, b);
  } else if (*p == 'S') {
    ip_sockaddr(out, i, p + 1, strip_casts(arg));
  }
}

// %pIS[p][c][hnbl] and %piS: a struct sockaddr in a field or dynamic array;
// `p` points after the S.
void Eval::ip_sockaddr(TextOut& out, char i, const char* p, const Node* a) const {
  bool have_p = false, have_c = false, reverse = false;
  if (i == 'I') {
    if (*p == 'p') { have_p = true; ++p; }
    if (*p == 'c') { have_c = true; ++p; }
  }
  ip4_args(p, e, reverse);
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

}  // namespace tracebed::decode::print_fmt
