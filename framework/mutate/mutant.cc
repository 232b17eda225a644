#include "framework/mutate/mutant.h"

#include <cctype>
#include <cstdlib>
#include <set>
#include <utility>

#include <fmt/format.h>

namespace tracebed::mutate {
namespace {

constexpr std::pair<Operator, std::string_view> kNames[] = {
    {Operator::relational_boundary, "relational-boundary"},
    {Operator::equality, "equality"},
    {Operator::logical, "logical"},
    {Operator::negated_condition, "negated-condition"},
    {Operator::off_by_one_removed, "off-by-one-removed"},
    {Operator::constant_plus_one, "constant-plus-one"},
    {Operator::call_removed, "call-removed"},
    {Operator::return_value, "return-value"},
};

bool is_keyword(std::string_view w) {
  static const std::set<std::string_view> k = {"return", "if",    "while",  "for",  "switch",   "sizeof", "do",
                                               "else",   "case",  "goto",   "break", "continue", "default",
                                               "typeof", "__typeof__", "asm", "__asm__", "volatile"};
  return k.contains(w);
}

// An integer literal's value and suffix (16, 0x10U, 0b1); false for floats.
bool integer_literal(std::string_view text, unsigned long long* value, std::string_view* digits_end_suffix,
                     int* base) {
  size_t i = 0;
  *base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    *base = 16;
    i = 2;
  } else if (text.size() > 1 && text[0] == '0' && std::isdigit(static_cast<unsigned char>(text[1]))) {
    *base = 8;
    i = 1;
  }
  size_t start = i;
  while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i])) &&
         (*base == 16 || std::isdigit(static_cast<unsigned char>(text[i]))))
    ++i;
  if (i == start && !(text == "0")) return false;
  std::string_view suffix = text.substr(i);
  for (char c : suffix)
    if (c != 'u' && c != 'U' && c != 'l' && c != 'L') return false;
  *value = std::strtoull(std::string(text.substr(0, i)).c_str(), nullptr, *base);
  *digits_end_suffix = suffix;
  return true;
}

std::string plus_one(std::string_view text) {
  unsigned long long v = 0;
  std::string_view suffix;
  int base = 10;
  if (!integer_literal(text, &v, &suffix, &base) || v == ~0ULL) return "";
  if (base == 16) return fmt::format("{}{:x}{}", text.substr(0, 2), v + 1, suffix);
  if (base == 8) return fmt::format("0{:o}{}", v + 1, suffix);
  return fmt::format("{}{}", v + 1, suffix);
}

// The index of the ')' that closes the '(' at tokens[open], or npos.
size_t closing_paren(const std::vector<Token>& t, size_t open) {
  int depth = 0;
  for (size_t i = open; i < t.size(); ++i) {
    if (t[i].text == "(") ++depth;
    else if (t[i].text == ")" && --depth == 0) return i;
    else if (t[i].text == ";" && depth == 1 && t[open].text == "(") {
      // for (a; b; c) has semicolons inside: fine; keep looking.
    }
  }
  return std::string::npos;
}

// The lines [first line of begin, last line of end), whole.
std::pair<size_t, size_t> line_span(std::string_view text, size_t begin, size_t end) {
  size_t b = begin == 0 ? 0 : text.rfind('\n', begin - 1);
  b = b == std::string_view::npos ? 0 : (begin == 0 ? 0 : b + 1);
  size_t e = text.find('\n', end);
  if (e == std::string_view::npos) e = text.size();
  return {b, e};
}

uint64_t fnv1a(std::string_view s) {
  uint64_t h = 1469598103934665603ULL;
  for (unsigned char c : s) h = (h ^ c) * 1099511628211ULL;
  return h;
}

class Generator {
 public:
  Generator(const std::string& file, const CSource& src) : file_(file), src_(src), t_(src.tokens) {}

  std::vector<Mutant> run() {
    for (size_t i = 0; i < t_.size(); ++i) {
      if (t_[i].function.empty()) continue;
      swaps(i);
      negated_condition(i);
      off_by_one(i);
      constant(i);
      call_removed(i);
      return_value(i);
    }
    return std::move(out_);
  }

 private:
  void add(Operator op, size_t line, size_t offset, size_t length, std::string replacement, const std::string& fn) {
    Mutant m;
    m.file = file_;
    m.function = fn;
    m.line = line;
    m.offset = offset;
    m.length = length;
    m.replacement = std::move(replacement);
    m.op = op;
    auto [b, e] = line_span(src_.text, offset, offset + length);
    m.original_line = src_.text.substr(b, e - b);
    m.mutated_line = m.original_line;
    m.mutated_line.replace(offset - b, length, m.replacement);
    if (!seen_.insert(fmt::format("{}\n{}", b, m.mutated_line)).second) return;  // the same line again
    out_.push_back(std::move(m));
  }
  void replace_token(Operator op, size_t i, std::string replacement) {
    add(op, t_[i].line, t_[i].offset, t_[i].text.size(), std::move(replacement), t_[i].function);
  }

  void swaps(size_t i) {
    static const std::pair<std::string_view, std::string_view> kSwaps[] = {
        {"<", "<="}, {"<=", "<"}, {">", ">="}, {">=", ">"}, {"==", "!="}, {"!=", "=="}, {"&&", "||"}, {"||", "&&"}};
    if (t_[i].kind != TokenKind::punctuator) return;
    for (auto [from, to] : kSwaps) {
      if (t_[i].text != from) continue;
      Operator op = from == "==" || from == "!=" ? Operator::equality
                    : from == "&&" || from == "||" ? Operator::logical
                                                   : Operator::relational_boundary;
      replace_token(op, i, std::string(to));
    }
  }

  void negated_condition(size_t i) {
    if (t_[i].text != "if" && t_[i].text != "while") return;
    if (i + 1 >= t_.size() || t_[i + 1].text != "(") return;
    size_t close = closing_paren(t_, i + 1);
    if (close == std::string::npos || close == i + 2) return;
    size_t begin = t_[i + 1].offset + 1, end = t_[close].offset;
    add(Operator::negated_condition, t_[i].line, begin, end - begin,
        "!(" + src_.text.substr(begin, end - begin) + ")", t_[i].function);
  }

  void off_by_one(size_t i) {
    if (i == 0 || i + 1 >= t_.size()) return;
    if (t_[i].text != "+" && t_[i].text != "-") return;
    const Token& next = t_[i + 1];
    if (next.kind != TokenKind::number || plus_one(next.text) != "2" + next.text.substr(1)) return;  // "1", "1U"...
    const Token& prev = t_[i - 1];
    bool binary = prev.kind != TokenKind::punctuator || prev.text == ")" || prev.text == "]";
    if (!binary || (prev.kind == TokenKind::identifier && is_keyword(prev.text))) return;
    // From the end of the left operand: "x + 1" becomes "x".
    size_t begin = prev.offset + prev.text.size();
    add(Operator::off_by_one_removed, t_[i].line, begin, next.offset + next.text.size() - begin, "", t_[i].function);
  }

  void constant(size_t i) {
    if (t_[i].kind != TokenKind::number) return;
    std::string more = plus_one(t_[i].text);
    if (!more.empty()) replace_token(Operator::constant_plus_one, i, more);
  }

  void call_removed(size_t i) {
    if (t_[i].kind != TokenKind::identifier || is_keyword(t_[i].text) || i == 0) return;
    const std::string& before = t_[i - 1].text;
    if (before == ")" && !closes_a_condition(i - 1)) return;  // a cast: (void) f();
    if (before != ";" && before != "{" && before != "}" && before != "else" && before != ")") return;
    if (i + 1 >= t_.size() || t_[i + 1].text != "(") return;
    size_t close = closing_paren(t_, i + 1);
    if (close == std::string::npos || close + 1 >= t_.size() || t_[close + 1].text != ";") return;
    size_t end = t_[close + 1].offset + 1;
    add(Operator::call_removed, t_[i].line, t_[i].offset, end - t_[i].offset, ";", t_[i].function);
  }

  // Whether the ')' at tokens[close] ends the condition of an if, while or for.
  bool closes_a_condition(size_t close) const {
    int depth = 0;
    for (size_t j = close + 1; j-- > 0;) {
      if (t_[j].text == ")") ++depth;
      else if (t_[j].text == "(" && --depth == 0)
        return j > 0 && (t_[j - 1].text == "if" || t_[j - 1].text == "while" || t_[j - 1].text == "for");
    }
    return false;
  }

  void return_value(size_t i) {
    if (t_[i].text != "return" || i + 1 >= t_.size()) return;
    const Token& a = t_[i + 1];
    const Token* b = i + 2 < t_.size() ? &t_[i + 2] : nullptr;
    const Token* c = i + 3 < t_.size() ? &t_[i + 3] : nullptr;
    if (b && b->text == ";") {
      if (a.text == "0") replace_token(Operator::return_value, i + 1, "1");
      else if (a.text == "1") replace_token(Operator::return_value, i + 1, "0");
      else if (a.text == "true") replace_token(Operator::return_value, i + 1, "false");
      else if (a.text == "false") replace_token(Operator::return_value, i + 1, "true");
      return;
    }
    // return -EINVAL; -> return 0;
    if (a.text == "-" && b && b->kind == TokenKind::identifier && b->text.size() > 1 && b->text[0] == 'E' &&
        c && c->text == ";") {
      bool upper = true;
      for (char ch : b->text) upper &= std::isupper(static_cast<unsigned char>(ch)) || std::isdigit(static_cast<unsigned char>(ch)) || ch == '_';
      if (upper) add(Operator::return_value, a.line, a.offset, b->offset + b->text.size() - a.offset, "0", a.function);
    }
  }

  const std::string& file_;
  const CSource& src_;
  const std::vector<Token>& t_;
  std::vector<Mutant> out_;
  std::set<std::string> seen_;
};

}  // namespace

std::string_view operator_name(Operator op) {
  for (auto [o, name] : kNames)
    if (o == op) return name;
  return "?";
}

bool parse_operator(std::string_view name, Operator* out) {
  for (auto [o, n] : kNames) {
    if (n == name) {
      *out = o;
      return true;
    }
  }
  return false;
}

std::string Mutant::id() const {
  return fmt::format("{}:{}:{}:{:08x}", file, line, operator_name(op),
                     static_cast<uint32_t>(fnv1a(fmt::format("{}\n{}\n{}", offset, length, replacement))));
}

std::string Mutant::apply(std::string_view text) const {
  std::string out(text);
  out.replace(offset, length, replacement);
  return out;
}

std::string Mutant::diff() const {
  auto lines = [](std::string_view s, char mark) {
    std::string out;
    size_t n = 0;
    size_t pos = 0;
    while (pos <= s.size()) {
      size_t nl = s.find('\n', pos);
      if (nl == std::string_view::npos) nl = s.size();
      out += fmt::format("{}{}\n", mark, s.substr(pos, nl - pos));
      ++n;
      pos = nl + 1;
    }
    return std::make_pair(out, n);
  };
  auto [minus, n_old] = lines(original_line, '-');
  auto [plus, n_new] = lines(mutated_line, '+');
  return fmt::format("--- a/{0}\n+++ b/{0}\n@@ -{1},{2} +{1},{3} @@ {4}\n{5}{6}", file, line, n_old, n_new, function,
                     minus, plus);
}

std::vector<Mutant> mutants_of(const std::string& file, const CSource& source) {
  return Generator(file, source).run();
}

}  // namespace tracebed::mutate
