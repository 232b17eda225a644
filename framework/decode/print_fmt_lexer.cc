#include "framework/decode/print_fmt_lexer.h"

namespace tracebed::decode::print_fmt {

namespace {

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

}  // namespace

Tok Lexer::raw(std::string& tok) {
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
    case Tok::op:
      return op(ch, tok);
    case Tok::dquote:
    case Tok::squote:
      return quoted(ch, type, tok);
    default:
      break;
  }
  while (char_type(peek()) == type) tok.push_back(static_cast<char>(get()));
  return type;
}

// The rest of an operator whose first character `ch` is in `tok`.
Tok Lexer::op(int ch, std::string& tok) {
  int next = peek();
  if (ch == '-' && next == '>') {
    tok.push_back(static_cast<char>(get()));
    return Tok::op;
  }
  if (ch == '-' || ch == '+' || ch == '|' || ch == '&' || ch == '>' || ch == '<') {
    if (next == ch) {
      tok.push_back(static_cast<char>(get()));
      if (ch == '>' || ch == '<') test_equal(tok);  // >>= <<=
      return Tok::op;
    }
    test_equal(tok);
    return Tok::op;
  }
  if (ch == '!' || ch == '=') test_equal(tok);
  return Tok::op;
}

// A string or character constant whose opening quote `ch` was read.
Tok Lexer::quoted(int ch, Tok type, std::string& tok) {
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

}  // namespace tracebed::decode::print_fmt
