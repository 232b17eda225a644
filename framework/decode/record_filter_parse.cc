// libtraceevent's filter expression parser (parse-filter.c process_filter
// and its tokenizer, event-parse.c __read_token), step for step: the trees
// it builds decide what `trace-cmd report -F` prints, its quirks included
// (no precedence between && and ||, a comparison's left side must be a
// field).
#include <cctype>
#include <cstdlib>

#include <fmt/format.h>

#include "framework/decode/record_filter_internal.h"

namespace tracebed::decode::filter {
namespace {

enum class Tok { none, space, newline, item, dquote, squote, delim, op, error };

Tok type_of(int ch) {
  if (ch == '\n') return Tok::newline;
  if (ch < 0) return Tok::none;
  if (std::isspace(ch)) return Tok::space;
  if (std::isalnum(ch) || ch == '_') return Tok::item;
  if (ch == '\'') return Tok::squote;
  if (ch == '"') return Tok::dquote;
  if (!std::isprint(ch)) return Tok::none;
  if (ch == '(' || ch == ')' || ch == ',') return Tok::delim;
  return Tok::op;
}

class Lexer {
 public:
  explicit Lexer(std::string_view in) : in_(in) {}
  size_t pos() const { return pos_; }
  // filter_read_token: skips blanks; "=" or "!" before '~' is one token.
  Tok next(std::string& tok) {
    Tok t;
    do t = read(tok);
    while (t == Tok::newline || t == Tok::space);
    if ((tok == "=" || tok == "!") && peek() == '~') {
      tok += '~';
      ++pos_;
    }
    return t;
  }

 private:
  int peek() const { return pos_ < in_.size() ? static_cast<unsigned char>(in_[pos_]) : -1; }
  int get() { return pos_ < in_.size() ? static_cast<unsigned char>(in_[pos_++]) : -1; }
  Tok read(std::string& tok);
  Tok read_op(int ch, std::string& tok);
  Tok read_quoted(int quote, Tok type, std::string& tok);
  std::string_view in_;
  size_t pos_ = 0;
};

Tok Lexer::read(std::string& tok) {
  tok.clear();
  const int ch = get();
  const Tok type = type_of(ch);
  if (type == Tok::none) return type;
  if (type == Tok::newline || type == Tok::delim) {
    tok = static_cast<char>(ch);
    return type;
  }
  if (type == Tok::op) return read_op(ch, tok);
  if (type == Tok::dquote || type == Tok::squote) return read_quoted(ch, type, tok);
  tok = static_cast<char>(ch);
  while (type_of(peek()) == type) tok += static_cast<char>(get());
  return type;
}

Tok Lexer::read_op(int ch, std::string& tok) {
  tok = static_cast<char>(ch);
  bool test_equal = false;
  switch (ch) {
    case '-':
      if (peek() == '>') {
        tok += static_cast<char>(get());
        return Tok::op;
      }
      [[fallthrough]];
    case '+': case '|': case '&': case '>': case '<':
      if (peek() != ch) {
        test_equal = true;
        break;
      }
      tok += static_cast<char>(get());
      test_equal = ch == '>' || ch == '<';
      break;
    case '!': case '=':
      test_equal = true;
      break;
    default:
      break;
  }
  if (test_equal && peek() == '=') tok += static_cast<char>(get());
  return Tok::op;
}

// Quotes are dropped; a quote after a backslash is kept, with it (even
// after two: libtraceevent's cancelling of "\\\\" has no effect);
// two double-quoted strings with only blanks between are one.
Tok Lexer::read_quoted(int quote, Tok type, std::string& tok) {
  for (;;) {
    int last = 0, ch = quote;
    for (;;) {
      last = ch;
      ch = get();
      if (ch < 0) return Tok::error;  // libtraceevent reads on past the end
      if (ch == quote && last != '\\') break;
      tok += static_cast<char>(ch);
    }
    if (type != Tok::dquote) return type;
    const size_t save = pos_;
    int next;
    do next = get();
    while (next >= 0 && std::isspace(next));
    if (next != '"') {
      pos_ = save;
      return type;
    }
  }
}

enum class Status { ok, unbalanced_paren, error };

class Parser {
 public:
  Parser(const EventFormat& event, std::string_view text) : event_(event), lex_(text), text_(text) {}
  Result<Expr> run();

 private:
  Status process(bool is_not, int& out);
  Status on_item(Tok type, const std::string& tok, bool is_not, int& left_item, int& current_exp,
                 int current_op, int& out, bool& done);
  Status on_delim(const std::string& tok, bool is_not, int& left_item, int& current_exp, int& current_op,
                  int& out, bool& done);
  Status on_op(const std::string& tok, int& left_item, int& current_exp, int& current_op);
  Status create_item(Tok type, const std::string& tok, int& out);
  Status add_right(int op, int arg);
  Status add_right_compare(int op, int arg);
  bool add_left(int op, int arg);
  bool op_done(int arg) const;
  Status fail(const std::string& what) {
    if (error_.empty()) error_ = fmt::format("{} at byte {}", what, lex_.pos());
    return Status::error;
  }
  Status syntax() { return fail("syntax error"); }
  int make(Node n) {
    expr_.nodes.push_back(std::move(n));
    return static_cast<int>(expr_.nodes.size() - 1);
  }
  Node& at(int i) { return expr_.nodes[static_cast<size_t>(i)]; }

  const EventFormat& event_;
  Lexer lex_;
  std::string_view text_;
  Expr expr_;
  std::string error_;
};

Status Parser::create_item(Tok type, const std::string& tok, int& out) {
  Node n;
  if (type == Tok::squote || type == Tok::dquote) {
    n.kind = Kind::value;
    n.value_type = type == Tok::dquote ? ValueType::string : ValueType::character;
    n.text = tok;
  } else if (type == Tok::item && std::isdigit(static_cast<unsigned char>(tok[0]))) {
    n.kind = Kind::value;
    n.number = std::strtoull(tok.c_str(), nullptr, 0);
  } else if (type == Tok::item) {
    n.field = event_.field(tok);
    n.kind = Kind::field;
    if (!n.field && tok == "COMM") {
      n.special = Special::comm;
    } else if (!n.field && tok == "CPU") {
      n.special = Special::cpu;
    } else if (!n.field) {
      n.kind = Kind::boolean;  // not a field of this event: false
      n.boolean = false;
    }
  } else {
    return fail(fmt::format("expected a value but found '{}'", tok));
  }
  out = make(std::move(n));
  return Status::ok;
}

// A comparison's right side: a number, or a string that turns the
// comparison into a string compare (a one-char 'c' is a number).
Status Parser::add_right_compare(int op, int arg) {
  if (at(op).right >= 0) return syntax();
  if (at(arg).kind != Kind::value) return fail("illegal rvalue");
  Node& a = at(arg);
  const bool char_number = a.value_type == ValueType::character && a.text.size() == 1 &&
                           at(op).cmp != Cmp::regex && at(op).cmp != Cmp::not_regex;
  if (char_number) {
    a.value_type = ValueType::number;
    a.number = static_cast<unsigned char>(a.text[0]);
  }
  if (a.value_type == ValueType::number) {
    if (at(op).cmp == Cmp::regex || at(op).cmp == Cmp::not_regex) return fail("op not allowed with integers");
    at(op).right = arg;
    return Status::ok;
  }
  const int left = at(op).left;
  const std::string str = a.text;
  Cmp cmp = at(op).cmp;
  if (at(left).kind == Kind::boolean) {  // a field the event lacks: false
    at(op) = Node{};
    return Status::ok;
  }
  if (at(left).kind != Kind::field) return fail("illegal lvalue for string comparison");
  Node s;
  s.kind = Kind::str;
  s.field = at(left).field;
  s.special = at(left).special;
  s.text = str;
  if (cmp == Cmp::eq) {
    s.cmp = Cmp::match;
  } else if (cmp == Cmp::ne) {
    s.cmp = Cmp::not_match;
  } else if (cmp == Cmp::regex || cmp == Cmp::not_regex) {
    auto re = Regex::compile(str);
    if (!re) return fail(fmt::format("regex '{}' did not compile", str));
    s.cmp = cmp;
    s.regex = *re;
  } else {
    return fail("illegal comparison for string");
  }
  at(op) = std::move(s);
  return Status::ok;
}

Status Parser::add_right(int op, int arg) {
  switch (at(op).kind) {
    case Kind::exp:
    case Kind::op:
      if (at(op).right >= 0) return syntax();
      at(op).right = arg;
      return Status::ok;
    case Kind::num:
      return add_right_compare(op, arg);
    default:
      return syntax();
  }
}

bool Parser::add_left(int op, int arg) {
  Node& o = at(op);
  if ((o.kind == Kind::exp || o.kind == Kind::num) && at(arg).kind == Kind::op) {
    // rotate_op_right: the operator takes the op's right side.
    const int r = at(arg).right;
    at(arg).right = op;
    arg = r;
  }
  if (o.kind == Kind::op || o.kind == Kind::exp) {
    at(op).left = arg;
    return true;
  }
  if (o.kind != Kind::num || arg < 0) return false;
  if (at(arg).kind != Kind::field && at(arg).kind != Kind::boolean) return false;
  at(op).left = arg;
  return true;
}

bool Parser::op_done(int arg) const {
  const Node& n = expr_.nodes[static_cast<size_t>(arg)];
  switch (n.kind) {
    case Kind::exp: case Kind::op: case Kind::num: return n.right >= 0;
    case Kind::str: case Kind::boolean: return true;
    default: return false;
  }
}

Status Parser::on_item(Tok type, const std::string& tok, bool is_not, int& left_item, int& current_exp,
                       int current_op, int& out, bool& done) {
  int arg = -1;
  if (Status st = create_item(type, tok, arg); st != Status::ok) return st;
  if (left_item < 0) {
    left_item = arg;
    return Status::ok;
  }
  if (current_exp < 0) return syntax();
  if (Status st = add_right(current_exp, arg); st != Status::ok) return st;
  left_item = -1;
  if (is_not) {  // a ! takes one expression
    if (current_op >= 0) return syntax();
    out = current_exp;
    done = true;
  }
  return Status::ok;
}

Status Parser::on_delim(const std::string& tok, bool is_not, int& left_item, int& current_exp, int& current_op,
                        int& out, bool& done) {
  if (tok == ",") return fail("illegal token ','");
  if (tok == "(") {
    if (left_item >= 0) return fail("open paren can not come after item");
    if (current_exp >= 0) return fail("open paren can not come after expression");
    int arg = -1;
    const Status st = process(false, arg);
    if (st == Status::ok) return fail("unbalanced number of '('");
    if (st != Status::unbalanced_paren) return st;
    if (is_not) {
      if (current_op >= 0) return syntax();
      out = arg;
      done = true;
      return Status::ok;
    }
    if (current_op >= 0) return add_right(current_op, arg);
    current_exp = arg;
    return Status::ok;
  }
  // ')': this level is finished.
  if (current_op < 0 && current_exp < 0) return syntax();
  if (current_exp >= 0 && !op_done(current_exp)) return syntax();
  if (current_op >= 0 && !op_done(current_op)) return syntax();
  out = current_op >= 0 ? current_op : current_exp;
  return Status::unbalanced_paren;
}

Status Parser::on_op(const std::string& tok, int& left_item, int& current_exp, int& current_op) {
  static const std::pair<const char*, Exp> kExps[] = {
      {"+", Exp::add}, {"-", Exp::sub}, {"*", Exp::mul}, {"/", Exp::div}, {"%", Exp::mod}, {">>", Exp::rshift},
      {"<<", Exp::lshift}, {"&", Exp::and_}, {"|", Exp::or_}, {"^", Exp::xor_}, {"~", Exp::not_}};
  static const std::pair<const char*, Cmp> kCmps[] = {{"==", Cmp::eq}, {"!=", Cmp::ne}, {"<", Cmp::lt},
                                                      {">", Cmp::gt},  {"<=", Cmp::le}, {">=", Cmp::ge},
                                                      {"=~", Cmp::regex}, {"!~", Cmp::not_regex}};
  if (tok == "&&" || tok == "||") {
    if (current_exp < 0 && current_op < 0) return syntax();
    if (left_item >= 0) return syntax();
    Node n;
    n.kind = Kind::op;
    n.op = tok == "&&" ? Op::and_ : Op::or_;
    const int arg = make(std::move(n));
    add_left(arg, current_op >= 0 ? current_op : current_exp);
    current_op = arg;
    current_exp = -1;
    return Status::ok;
  }
  if (tok == "!") {
    if (left_item >= 0) return syntax();
    Node n;
    n.kind = Kind::op;
    n.op = Op::not_;
    const int arg = make(std::move(n));
    if (current_op >= 0)
      if (Status st = add_right(current_op, arg); st != Status::ok) return st;
    current_exp = arg;
    int inner = -1;
    if (Status st = process(true, inner); st != Status::ok) return st == Status::unbalanced_paren ? syntax() : st;
    return add_right(current_exp, inner);
  }
  Node n;
  for (const auto& [text, e] : kExps)
    if (tok == text) n.kind = Kind::exp, n.exp = e;
  for (const auto& [text, c] : kCmps)
    if (tok == text) n.kind = Kind::num, n.cmp = c;
  if (n.kind != Kind::exp && n.kind != Kind::num) return fail(fmt::format("unknown op token '{}'", tok));
  if (left_item < 0) return syntax();
  const int arg = make(std::move(n));
  if (current_op >= 0)
    if (Status st = add_right(current_op, arg); st != Status::ok) return st;
  if (!add_left(arg, left_item)) return syntax();
  current_exp = arg;
  return Status::ok;
}

// process_filter: tokens until the end, a ')' (Status::unbalanced_paren
// with what this level made) or, under a !, one expression.
Status Parser::process(bool is_not, int& out) {
  int current_op = -1, current_exp = -1, left_item = -1;
  out = -1;
  std::string tok;
  for (;;) {
    const Tok type = lex_.next(tok);
    bool done = false;
    Status st = Status::ok;
    switch (type) {
      case Tok::squote: case Tok::dquote: case Tok::item:
        st = on_item(type, tok, is_not, left_item, current_exp, current_op, out, done);
        break;
      case Tok::delim:
        st = on_delim(tok, is_not, left_item, current_exp, current_op, out, done);
        break;
      case Tok::op:
        st = on_op(tok, left_item, current_exp, current_op);
        break;
      case Tok::none:
        break;
      case Tok::error:
        return fail("unterminated string");
      default:
        return syntax();
    }
    if (st != Status::ok || done) return st;
    if (type == Tok::none) break;
  }
  if (current_op < 0 && current_exp < 0) return syntax();
  out = current_op >= 0 ? current_op : current_exp;
  return Status::ok;
}

// collapse_tree: comparisons with a field the event lacks are false, and
// constant && || ! fold away. Returns the value when the whole of `i` is
// constant; otherwise replaces `i` by what is left of it.
std::optional<bool> fold(Expr& e, int& i) {
  Node& n = e.nodes[static_cast<size_t>(i)];
  switch (n.kind) {
    case Kind::boolean:
      return n.boolean;
    case Kind::str: case Kind::value: case Kind::field:
      return std::nullopt;
    case Kind::exp: case Kind::num: {
      int l = n.left, r = n.right;
      if (l >= 0)
        if (auto v = fold(e, l)) return v;
      if (r >= 0)
        if (auto v = fold(e, r)) return v;
      return std::nullopt;
    }
    case Kind::op:
      break;
  }
  const Op op = n.op;
  int l = n.left, r = n.right;
  if (op == Op::not_) {
    auto v = r >= 0 ? fold(e, r) : std::nullopt;
    e.nodes[static_cast<size_t>(i)].right = r;
    if (v) return !*v;
    return std::nullopt;
  }
  const std::optional<bool> lv = l >= 0 ? fold(e, l) : std::nullopt;
  if (lv && *lv == (op == Op::or_)) return lv;  // true || x, false && x
  const std::optional<bool> rv = r >= 0 ? fold(e, r) : std::nullopt;
  if (lv) {
    if (rv) return rv;
    i = r;  // true && x, false || x: x
    return std::nullopt;
  }
  if (rv) {
    if (*rv == (op == Op::or_)) return rv;
    i = l;
    return std::nullopt;
  }
  e.nodes[static_cast<size_t>(i)].left = l;
  e.nodes[static_cast<size_t>(i)].right = r;
  return std::nullopt;
}

// Whether every operator has its operands: "pid ==" parses in
// libtraceevent, and trace-cmd then crashes on the first record.
bool complete(const Expr& e, int i) {
  if (i < 0) return false;
  const Node& n = e.nodes[static_cast<size_t>(i)];
  switch (n.kind) {
    case Kind::op:
      return (n.op == Op::not_ || complete(e, n.left)) && complete(e, n.right);
    case Kind::num: case Kind::exp:
      return complete(e, n.left) && complete(e, n.right);
    default:
      return true;
  }
}

Result<Expr> Parser::run() {
  int root = -1;
  const Status st = process(false, root);
  if (st == Status::ok && !complete(expr_, root))
    return Error{fmt::format("an operator without its operand in \"{}\"", text_)};
  if (st == Status::unbalanced_paren) return Error{fmt::format("syntax error: unbalanced ')' in \"{}\"", text_)};
  if (st != Status::ok) return Error{fmt::format("{} in \"{}\"", error_, text_)};
  if (auto v = fold(expr_, root)) {
    Node b;
    b.boolean = *v;
    root = make(std::move(b));
  }
  expr_.root = root;
  return std::move(expr_);
}

}  // namespace

Result<Expr> parse_expression(const EventFormat& event, std::string_view text) {
  return Parser(event, text).run();
}

}  // namespace tracebed::decode::filter
