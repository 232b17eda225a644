#include "framework/mutate/c_source.h"

#include <cctype>

namespace tracebed::mutate {
namespace {

bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Longest first: the punctuators a mutation operator looks at, and the ones
// that contain them (so that "<<=" is not read as "<" "<=").
constexpr std::string_view kPunctuators[] = {"<<=", ">>=", "...", "->", "++", "--", "<<", ">>", "<=", ">=", "==",
                                             "!=",  "&&",  "||",  "+=", "-=", "*=", "/=", "%=", "&=", "|=", "^="};

}  // namespace

CSource CSource::parse(std::string text) {
  CSource src;
  src.text = std::move(text);
  const std::string& s = src.text;
  size_t i = 0, line = 1;
  bool line_start = true;  // only blanks since the last newline
  int depth = 0, paren = 0;
  std::string function, last_ident_before_paren, candidate;
  bool saw_close_paren = false;  // a ')' at depth 0 since the last ';' or '}'
  auto newline = [&] {
    ++line;
    line_start = true;
  };
  while (i < s.size()) {
    char c = s[i];
    if (c == '\n') {
      newline();
      ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      ++i;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '/') {
      while (i < s.size() && s[i] != '\n') ++i;
      continue;
    }
    if (c == '/' && i + 1 < s.size() && s[i + 1] == '*') {
      i += 2;
      while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
        if (s[i] == '\n') ++line;
        ++i;
      }
      i += 2;
      continue;
    }
    if (c == '#' && line_start) {
      // A directive, with its continuation lines: a macro body is not code.
      while (i < s.size() && s[i] != '\n') {
        if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == '\n') {
          ++line;
          ++i;
        } else if (s[i] == '/' && i + 1 < s.size() && s[i + 1] == '*') {
          i += 2;
          while (i + 1 < s.size() && !(s[i] == '*' && s[i + 1] == '/')) {
            if (s[i] == '\n') ++line;
            ++i;
          }
          ++i;
        }
        ++i;
      }
      continue;
    }
    line_start = false;
    if (c == '"' || c == '\'') {
      ++i;
      while (i < s.size() && s[i] != c) {
        if (s[i] == '\\') ++i;
        else if (s[i] == '\n') ++line;
        ++i;
      }
      ++i;
      continue;
    }
    Token t{TokenKind::punctuator, "", i, line, depth > 0 ? function : "", depth};
    if (ident_start(c)) {
      size_t j = i;
      while (j < s.size() && ident_char(s[j])) ++j;
      t.kind = TokenKind::identifier;
      t.text = s.substr(i, j - i);
      i = j;
      if (depth == 0 && paren == 0) candidate = t.text;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
      t.kind = TokenKind::number;
      t.text = s.substr(i, j - i);
      i = j;
    } else {
      size_t len = 1;
      for (std::string_view p : kPunctuators) {
        if (s.compare(i, p.size(), p) == 0) {
          len = p.size();
          break;
        }
      }
      t.text = s.substr(i, len);
      i += len;
      if (t.text == "(") {
        // The first parameter list names the function; later ones are
        // attributes (__acquires(x)) between it and the body.
        if (depth == 0 && paren == 0 && last_ident_before_paren.empty()) last_ident_before_paren = candidate;
        ++paren;
      } else if (t.text == ")") {
        if (paren > 0) --paren;
        if (depth == 0 && paren == 0) saw_close_paren = true;
      } else if (t.text == "{") {
        // A brace at the top level after a parameter list opens a function
        // body; any other (struct, initializer) is not one.
        if (depth == 0) function = saw_close_paren ? last_ident_before_paren : "";
        ++depth;
        t.depth = depth;
        t.function = function;
      } else if (t.text == "}") {
        if (depth > 0) --depth;
        if (depth == 0) {
          function.clear();
          saw_close_paren = false;
          last_ident_before_paren.clear();
        }
      } else if ((t.text == ";" || t.text == "=") && depth == 0 && paren == 0) {
        // A declaration ended, or an initializer follows: not a function.
        saw_close_paren = false;
        last_ident_before_paren.clear();
      }
    }
    src.tokens.push_back(std::move(t));
  }
  return src;
}

std::string_view CSource::line_at(size_t offset) const {
  size_t begin = text.rfind('\n', offset == 0 ? 0 : offset - 1);
  begin = begin == std::string::npos || offset == 0 ? 0 : begin + 1;
  if (offset > 0 && text[offset - 1] == '\n') begin = offset;
  size_t end = text.find('\n', offset);
  return std::string_view(text).substr(begin, (end == std::string::npos ? text.size() : end) - begin);
}

}  // namespace tracebed::mutate
