#include "framework/tracefs/sql_statement.h"

#include <algorithm>
#include <cctype>

#include <fmt/format.h>

namespace tracebed::tracefs::sql {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string excerpt(std::string_view sql, size_t pos) {
  std::string_view rest = sql.substr(std::min(pos, sql.size()));
  std::string s(rest.substr(0, 40));
  std::replace(s.begin(), s.end(), '\n', ' ');
  if (rest.size() > 40) s += " ...";
  return s.empty() ? "the end" : "\"" + s + "\"";
}

namespace {

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

Result<std::vector<Token>> tokenize(std::string_view sql) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < sql.size()) {
    char c = sql[i];
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    Token t;
    t.pos = i;
    if (c == '\\' && i + 1 < sql.size() && is_ident_start(sql[i + 1])) {
      t.escaped = true;
      ++i;
      c = sql[i];
    }
    if (is_ident_start(c)) {
      size_t e = i;
      while (e < sql.size() && is_ident_char(sql[e])) ++e;
      t.kind = Tok::ident;
      t.text = sql.substr(i, e - i);
      i = e;
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t e = i;
      while (e < sql.size() && (std::isalnum(static_cast<unsigned char>(sql[e])))) ++e;
      t.kind = Tok::number;
      t.text = sql.substr(i, e - i);
      i = e;
    } else if (c == '"' || c == '\'') {
      size_t e = sql.find(c, i + 1);
      if (e == std::string_view::npos)
        return Error{fmt::format("sql: unterminated string at {}", excerpt(sql, i))};
      t.kind = Tok::string;
      t.text = sql.substr(i + 1, e - i - 1);
      i = e + 1;
    } else {
      static constexpr std::string_view two[] = {"&&", "||", "==", "!=", "<=", ">=", "=~"};
      t.kind = Tok::op;
      for (std::string_view op : two)
        if (sql.substr(i, 2) == op) t.text = op;
      if (t.text.empty()) {
        if (std::string_view("(),.+-*/&|!<>=~").find(c) == std::string_view::npos)
          return Error{fmt::format("sql: unexpected '{}' at {}", c, excerpt(sql, i))};
        t.text = std::string(1, c);
      }
      i += t.text.size();
    }
    out.push_back(std::move(t));
  }
  Token end;
  end.pos = sql.size();
  out.push_back(end);
  return out;
}

class Parser {
 public:
  Parser(std::string_view sql, std::vector<Token> toks) : sql_(sql), t_(std::move(toks)) {}

  Result<Statement> parse() {
    Statement s;
    TRACEBED_TRY(expect_keyword("SELECT"));
    do {
      TRACEBED_ASSIGN_OR_RETURN(Item it, item());
      s.items.push_back(std::move(it));
    } while (accept_op(","));
    TRACEBED_TRY(expect_keyword("FROM"));
    TRACEBED_ASSIGN_OR_RETURN(s.from, event_ref());
    if (accept_keyword("JOIN")) {
      TRACEBED_ASSIGN_OR_RETURN(EventRef j, event_ref());
      s.join = j;
      TRACEBED_TRY(expect_keyword("ON"));
      do {
        Match m;
        m.pos = cur().pos;
        TRACEBED_ASSIGN_OR_RETURN(m.a, field_ref());
        if (!accept_op("=") && !accept_op("==")) return error("expected '=' between the matched fields");
        TRACEBED_ASSIGN_OR_RETURN(m.b, field_ref());
        s.on.push_back(std::move(m));
      } while (accept_op("&&") || accept_keyword("AND"));
    }
    if (accept_keyword("WHERE")) {
      while (cur().kind != Tok::end) s.where.push_back(t_[i_++]);
      if (s.where.empty()) return error("expected a filter after WHERE");
    }
    if (cur().kind != Tok::end) return error("unexpected text");
    return s;
  }

 private:
  const Token& cur() const { return t_[i_]; }
  Error error(std::string_view what) const {
    return Error{fmt::format("sql: {} at {}", what, excerpt(sql_, cur().pos))};
  }
  bool is_keyword(std::string_view kw) const {
    return cur().kind == Tok::ident && !cur().escaped && iequals(cur().text, kw);
  }
  bool accept_keyword(std::string_view kw) {
    if (!is_keyword(kw)) return false;
    ++i_;
    return true;
  }
  Status expect_keyword(std::string_view kw) {
    if (!accept_keyword(kw)) return error(fmt::format("expected {}", kw));
    return {};
  }
  bool accept_op(std::string_view op) {
    if (cur().kind != Tok::op || cur().text != op) return false;
    ++i_;
    return true;
  }
  bool is_reserved() const {
    for (std::string_view kw : {"SELECT", "FROM", "JOIN", "ON", "WHERE", "AS", "AND", "OR", "CAST"})
      if (is_keyword(kw)) return true;
    return false;
  }
  Result<std::string> ident(std::string_view what) {
    if (cur().kind != Tok::ident || is_reserved()) return error(fmt::format("expected {}", what));
    return t_[i_++].text;
  }
  Result<FieldRef> field_ref() {
    FieldRef f;
    TRACEBED_ASSIGN_OR_RETURN(std::string first, ident("a field"));
    f.push_back(std::move(first));
    while (accept_op(".")) {
      TRACEBED_ASSIGN_OR_RETURN(std::string next, ident("a field after '.'"));
      f.push_back(std::move(next));
    }
    return f;
  }
  Result<EventRef> event_ref() {
    EventRef e;
    e.pos = cur().pos;
    TRACEBED_ASSIGN_OR_RETURN(e.name, ident("an event"));
    if (accept_op(".") || accept_op(":")) {
      e.system = e.name;
      TRACEBED_ASSIGN_OR_RETURN(e.name, ident("an event after its system"));
    }
    if (accept_keyword("AS")) {
      TRACEBED_ASSIGN_OR_RETURN(e.alias, ident("an alias after AS"));
    }
    return e;
  }
  Result<Item> item() {
    Item it;
    it.pos = cur().pos;
    if (accept_keyword("CAST")) {
      if (!accept_op("(")) return error("expected '(' after CAST");
      TRACEBED_ASSIGN_OR_RETURN(it.a, field_ref());
      TRACEBED_TRY(expect_keyword("AS"));
      TRACEBED_ASSIGN_OR_RETURN(it.cast, ident("a type after AS"));
      if (accept_op("-")) {  // SYM-OFFSET
        TRACEBED_ASSIGN_OR_RETURN(std::string more, ident("a type"));
        it.cast += "-" + more;
      }
      if (!accept_op(")")) return error("expected ')' to close CAST");
    } else if (accept_keyword("TIMESTAMP_DELTA")) {
      it.delta = 1;
    } else if (accept_keyword("TIMESTAMP_DELTA_USECS")) {
      it.delta = 2;
    } else {
      int parens = 0;
      while (accept_op("(")) ++parens;
      TRACEBED_ASSIGN_OR_RETURN(it.a, field_ref());
      if (cur().kind == Tok::op && (cur().text == "+" || cur().text == "-")) {
        it.op = t_[i_++].text[0];
        TRACEBED_ASSIGN_OR_RETURN(it.b, field_ref());
      }
      for (; parens > 0; --parens)
        if (!accept_op(")")) return error("expected ')'");
    }
    if (accept_keyword("AS")) {
      TRACEBED_ASSIGN_OR_RETURN(it.as, ident("a name after AS"));
    }
    return it;
  }

  std::string_view sql_;
  std::vector<Token> t_;
  size_t i_ = 0;
};

}  // namespace

Result<Statement> parse_statement(std::string_view sql) {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<Token> toks, tokenize(sql));
  return Parser(sql, std::move(toks)).parse();
}

}  // namespace tracebed::tracefs::sql
