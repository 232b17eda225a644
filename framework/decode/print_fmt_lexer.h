// The print fmt's tokens, read the way libtraceevent 1.7.1 reads them
// (src/event-parse.c __read_token): spaces and newlines are tokens, quotes
// are not kept, adjacent string literals concatenate. Private to the
// print-fmt parser.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace tracebed::decode::print_fmt {

// libtraceevent's token types, in its order (event_item_type relies on it).
enum class Tok : uint8_t { error, none, space, newline, op, delim, item, dquote, squote };

// The C locale's character classes, as libtraceevent calls them.
inline bool c_isspace(int c) { return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'; }
inline bool c_isalnum(int c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
inline bool c_isprint(int c) { return c >= 0x20 && c < 0x7f; }
inline bool c_isdigit(int c) { return c >= '0' && c <= '9'; }

inline bool is_item_type(Tok t) { return t == Tok::item || t == Tok::dquote || t == Tok::squote; }

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}

  // One token, spaces included (libtraceevent __read_token).
  Tok raw(std::string& tok);
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
  Tok op(int ch, std::string& tok);
  Tok quoted(int ch, Tok type, std::string& tok);
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

}  // namespace tracebed::decode::print_fmt
