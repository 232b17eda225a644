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

namespace {

// Where a scan of the text is: its offset and line, and whether only
// blanks came since the last newline (a '#' there starts a directive).
struct Cursor {
  const std::string& s;
  size_t i = 0, line = 1;
  bool line_start = true;
  bool at(std::string_view what) const { return s.compare(i, what.size(), what) == 0; }
};

// From a "/*" to past its "*/", counting the lines inside.
void skip_block_comment(Cursor& c) {
  c.i += 2;
  while (c.i + 1 < c.s.size() && !(c.s[c.i] == '*' && c.s[c.i + 1] == '/')) {
    if (c.s[c.i] == '\n') ++c.line;
    ++c.i;
  }
  c.i += 2;
}

// A directive, with its continuation lines: a macro body is not code.
void skip_directive(Cursor& c) {
  while (c.i < c.s.size() && c.s[c.i] != '\n') {
    if (c.at("\\\n")) {
      ++c.line;
      c.i += 2;
    } else if (c.at("/*")) {
      skip_block_comment(c);
    } else {
      ++c.i;
    }
  }
}

// A string or character literal, from its opening quote to past its close.
void skip_literal(Cursor& c) {
  const char quote = c.s[c.i++];
  while (c.i < c.s.size() && c.s[c.i] != quote) {
    if (c.s[c.i] == '\\') ++c.i;
    else if (c.s[c.i] == '\n') ++c.line;
    ++c.i;
  }
  ++c.i;
}

// Skips what is not a token at the cursor (a newline, blanks, a comment, a
// directive, a literal); false when a token starts there.
bool skip_non_token(Cursor& c) {
  const char ch = c.s[c.i];
  if (ch == '\n') {
    ++c.line;
    c.line_start = true;
    ++c.i;
  } else if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\f' || ch == '\v') {
    ++c.i;
  } else if (c.at("//")) {
    while (c.i < c.s.size() && c.s[c.i] != '\n') ++c.i;
  } else if (c.at("/*")) {
    skip_block_comment(c);
  } else if (ch == '#' && c.line_start) {
    skip_directive(c);
  } else {
    c.line_start = false;
    if (ch != '"' && ch != '\'') return false;
    skip_literal(c);
  }
  return true;
}

// The token at the cursor (an identifier, a number or a punctuator), its
// kind and text set; the cursor moves past it.
void read_token(Cursor& c, Token& t) {
  const std::string& s = c.s;
  size_t j = c.i;
  if (ident_start(s[j])) {
    while (j < s.size() && ident_char(s[j])) ++j;
    t.kind = TokenKind::identifier;
  } else if (std::isdigit(static_cast<unsigned char>(s[j]))) {
    while (j < s.size() && (ident_char(s[j]) || s[j] == '.')) ++j;
    t.kind = TokenKind::number;
  } else {
    size_t len = 1;
    for (std::string_view p : kPunctuators) {
      if (c.at(p)) {
        len = p.size();
        break;
      }
    }
    j += len;
  }
  t.text = s.substr(c.i, j - c.i);
  c.i = j;
}

// Which function body the tokens are in, from the braces and the
// parameter list before them.
class FunctionScope {
 public:
  int depth() const { return depth_; }
  const std::string& function() const { return function_; }

  void identifier(const std::string& text) {
    if (depth_ == 0 && paren_ == 0) candidate_ = text;
  }

  // Updates the scope for a punctuator; a "{" gets the depth and function
  // it opens.
  void punctuator(Token& t) {
    if (t.text == "(") {
      // The first parameter list names the function; later ones are
      // attributes (__acquires(x)) between it and the body.
      if (depth_ == 0 && paren_ == 0 && last_ident_before_paren_.empty()) last_ident_before_paren_ = candidate_;
      ++paren_;
    } else if (t.text == ")") {
      if (paren_ > 0) --paren_;
      if (depth_ == 0 && paren_ == 0) saw_close_paren_ = true;
    } else if (t.text == "{") {
      // A brace at the top level after a parameter list opens a function
      // body; any other (struct, initializer) is not one.
      if (depth_ == 0) function_ = saw_close_paren_ ? last_ident_before_paren_ : "";
      ++depth_;
      t.depth = depth_;
      t.function = function_;
    } else if (t.text == "}") {
      if (depth_ > 0) --depth_;
      if (depth_ == 0) {
        function_.clear();
        saw_close_paren_ = false;
        last_ident_before_paren_.clear();
      }
    } else if ((t.text == ";" || t.text == "=") && depth_ == 0 && paren_ == 0) {
      // A declaration ended, or an initializer follows: not a function.
      saw_close_paren_ = false;
      last_ident_before_paren_.clear();
    }
  }

 private:
  int depth_ = 0, paren_ = 0;
  std::string function_, last_ident_before_paren_, candidate_;
  bool saw_close_paren_ = false;  // a ')' at depth 0 since the last ';' or '}'
};

}  // namespace

CSource CSource::parse(std::string text) {
  CSource src;
  src.text = std::move(text);
  Cursor c{src.text};
  FunctionScope scope;
  while (c.i < src.text.size()) {
    if (skip_non_token(c)) continue;
    Token t{TokenKind::punctuator, "", c.i, c.line, scope.depth() > 0 ? scope.function() : "", scope.depth()};
    read_token(c, t);
    if (t.kind == TokenKind::identifier) scope.identifier(t.text);
    else if (t.kind == TokenKind::punctuator) scope.punctuator(t);
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
