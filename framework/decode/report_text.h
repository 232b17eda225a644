// Appending numbers and padded text to the report line without fmt's
// per-call setup: `report` prints a few numbers per event, millions of
// events per second, and fmt::format_to into a std::string costs a virtual
// grow and a zero-fill per call. Each helper prints what the printf
// conversion named beside it prints.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "framework/decode/text_out.h"

namespace tracebed::decode {

// Digits of v, right-aligned in buf[0..20); returns where they start.
inline char* format_decimal(uint64_t v, char* end) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char* p = end;
  while (v >= 100) {
    const unsigned pair = static_cast<unsigned>(v % 100) * 2;
    v /= 100;
    *--p = kPairs[pair + 1];
    *--p = kPairs[pair];
  }
  if (v >= 10) {
    const unsigned pair = static_cast<unsigned>(v) * 2;
    *--p = kPairs[pair + 1];
    *--p = kPairs[pair];
  } else {
    *--p = static_cast<char>('0' + v);
  }
  return p;
}

// "%llu", or "%*llu" / "%0*llu" with `width` and `fill` (' ' or '0').
inline void append_uint(TextOut& out, uint64_t v, size_t width = 0, char fill = ' ') {
  char buf[24];
  char* end = buf + sizeof buf;
  char* p = format_decimal(v, end);
  const size_t n = static_cast<size_t>(end - p);
  if (n < width) out.append(width - n, fill);
  out.append(p, n);
}

// "%lld", or "%*lld" with `width` (space padded, sign before the digits).
inline void append_int(TextOut& out, int64_t v, size_t width = 0) {
  char buf[24];
  char* end = buf + sizeof buf;
  const uint64_t mag = v < 0 ? 0 - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  char* p = format_decimal(mag, end);
  if (v < 0) *--p = '-';
  const size_t n = static_cast<size_t>(end - p);
  if (n < width) out.append(width - n, ' ');
  out.append(p, n);
}

// "%-*lld": left-aligned in `width`.
inline void append_int_left(TextOut& out, int64_t v, size_t width) {
  const size_t start = out.size();
  append_int(out, v);
  const size_t n = out.size() - start;
  if (n < width) out.append(width - n, ' ');
}

// How many hex digits "%llx" prints for v (1 for 0).
inline size_t hex_digit_count(uint64_t v) {
  return v ? static_cast<size_t>(64 - __builtin_clzll(v) + 3) / 4 : 1;
}

// All sixteen hex digits of v, most significant first, at out[0, 16): with
// SSE2 in a dozen instructions rather than a loop per digit (a kernel
// address is sixteen digits, and `-e all` prints a few per record).
inline void hex16_digits(uint64_t v, char* out, bool upper = false) {
#if defined(__SSE2__)
  // Byte 0 of the register is v's most significant byte.
  const __m128i bytes = _mm_cvtsi64_si128(static_cast<long long>(__builtin_bswap64(v)));
  const __m128i low_nibbles = _mm_and_si128(bytes, _mm_set1_epi8(0x0f));
  const __m128i high_nibbles = _mm_and_si128(_mm_srli_epi16(bytes, 4), _mm_set1_epi8(0x0f));
  const __m128i nibbles = _mm_unpacklo_epi8(high_nibbles, low_nibbles);  // each byte's high nibble first
  const __m128i past_nine = _mm_cmpgt_epi8(nibbles, _mm_set1_epi8(9));
  const __m128i letter_step = _mm_and_si128(past_nine, _mm_set1_epi8(upper ? 'A' - '0' - 10 : 'a' - '0' - 10));
  const __m128i ascii = _mm_add_epi8(_mm_add_epi8(nibbles, _mm_set1_epi8('0')), letter_step);
  _mm_storeu_si128(reinterpret_cast<__m128i*>(out), ascii);
#else
  const char* digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
  for (int i = 15; i >= 0; --i, v >>= 4) out[i] = digits[v & 15];
#endif
}

// "%llx" (lower case), or "%0*llx" with `width`.
inline void append_hex(TextOut& out, uint64_t v, size_t width = 0) {
  char buf[16];
  hex16_digits(v, buf);
  const size_t n = hex_digit_count(v);
  if (n < width) out.append(width - n, '0');
  out.append(buf + 16 - n, n);
}

// "%*s": right-aligned in `width`.
inline void append_right(TextOut& out, std::string_view s, size_t width) {
  if (s.size() < width) out.append(width - s.size(), ' ');
  out += s;
}

}  // namespace tracebed::decode
