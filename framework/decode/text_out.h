// The report text being written: a std::string whose room past the text is
// written through a pointer. std::string::append is a call (capacity check,
// length update, then a call to memcpy) for every few bytes a record adds,
// which came to ~45 instructions an append and a tenth of an `-e all`
// report; here an append of up to 16 bytes is a compare and two moves.
//
// The string holds `room` bytes more than the text while a TextOut is open
// (zero-filled once, when opened or grown); close() or the destructor cuts
// it back to the text. Nothing else may touch the string meanwhile.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace tracebed::decode {

// memcpy of n <= 16 bytes as fixed-size moves that may overlap (a call to
// memcpy costs more than copying a few bytes).
[[gnu::always_inline]] inline void copy_upto16(char* dst, const char* src, size_t n) {
  if (n >= 8) {
    uint64_t a, b;
    std::memcpy(&a, src, 8);
    std::memcpy(&b, src + n - 8, 8);
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + n - 8, &b, 8);
  } else if (n >= 4) {
    uint32_t a, b;
    std::memcpy(&a, src, 4);
    std::memcpy(&b, src + n - 4, 4);
    std::memcpy(dst, &a, 4);
    std::memcpy(dst + n - 4, &b, 4);
  } else if (n > 0) {
    dst[0] = src[0];
    dst[n / 2] = src[n / 2];
    dst[n - 1] = src[n - 1];
  }
}

class TextOut {
 public:
  // `room`: bytes opened past the text at a time. A report's batch opens
  // its whole buffer once; a caller formatting one record opens a little.
  explicit TextOut(std::string& s, size_t room = 256) : s_(&s), room_(std::max<size_t>(room, 64)) { open(); }
  ~TextOut() { close(); }
  TextOut(const TextOut&) = delete;
  TextOut& operator=(const TextOut&) = delete;

  // Cuts the string back to the text and lets go of it (closing again, or
  // the destructor, leaves it alone); restart() before writing again.
  void close() {
    if (s_) s_->resize(size());
    s_ = nullptr;
    base_ = cur_ = end_ = nullptr;
  }
  // Writes `s` from its start, its bytes dropped. Its length stays when it
  // has the room already: a buffer reused batch after batch is zero-filled
  // once, not per batch.
  void restart(std::string& s) {
    s_ = &s;
    if (s.size() < room_) s.resize(room_);
    base_ = s.data();
    cur_ = base_;
    end_ = base_ + s.size();
  }

  size_t size() const { return static_cast<size_t>(cur_ - base_); }
  bool empty() const { return cur_ == base_; }
  char back() const { return cur_[-1]; }
  void pop_back() { --cur_; }
  std::string_view view() const { return {base_, size()}; }
  // Where c is first found at or after `from`, or std::string::npos.
  size_t find(char c, size_t from) const {
    if (from >= size()) return std::string::npos;
    const void* at = std::memchr(base_ + from, c, size() - from);
    return at ? static_cast<size_t>(static_cast<const char*>(at) - base_) : std::string::npos;
  }
  // Keeps the first n bytes of the text (n <= size()).
  void truncate(size_t n) { cur_ = base_ + n; }

  [[gnu::always_inline]] void append(const char* p, size_t n) {
    if (static_cast<size_t>(end_ - cur_) < n) [[unlikely]]
      grow(n);
    copy(cur_, p, n);
    cur_ += n;
  }
  void append(std::string_view s) { append(s.data(), s.size()); }
  void append(size_t n, char c) {
    if (static_cast<size_t>(end_ - cur_) < n) [[unlikely]]
      grow(n);
    std::memset(cur_, c, n);
    cur_ += n;
  }
  void push_back(char c) {
    if (cur_ == end_) [[unlikely]]
      grow(1);
    *cur_++ = c;
  }
  TextOut& operator+=(char c) {
    push_back(c);
    return *this;
  }
  TextOut& operator+=(std::string_view s) {
    append(s.data(), s.size());
    return *this;
  }

  // For writers that print in place (snprintf): at least n writable bytes
  // at the end of the text; commit(k) then keeps k of them.
  char* reserve_tail(size_t n) {
    if (static_cast<size_t>(end_ - cur_) < n) grow(n);
    return cur_;
  }
  void commit(size_t k) { cur_ += k; }

 private:
  void open() {
    const size_t used = s_->size();
    s_->resize(used + room_);  // zero-fills the room: the one cost of opening
    base_ = s_->data();
    cur_ = base_ + used;
    end_ = base_ + s_->size();
  }
  [[gnu::noinline]] void grow(size_t n) {
    const size_t used = size();
    s_->resize(used);
    room_ = std::max(room_ * 2, n + 64);
    if (s_->capacity() < used + room_) s_->reserve(std::max(s_->capacity() * 2, used + room_));
    open();
  }
  [[gnu::always_inline]] static void copy(char* d, const char* p, size_t n) {
    if (n <= 16)
      copy_upto16(d, p, n);
    else
      std::memcpy(d, p, n);
  }

  std::string* s_;
  size_t room_;
  char* base_ = nullptr;
  char* cur_ = nullptr;
  char* end_ = nullptr;
};

}  // namespace tracebed::decode
