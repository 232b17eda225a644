// The SELECT statement of sqlhist's language, parsed (tokens, items,
// events, the join's matches, the WHERE tokens): what compile_sql() in
// sql.cc turns into hist triggers and a synthetic event.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::tracefs::sql {

enum class Tok { ident, number, string, op, end };

struct Token {
  Tok kind = Tok::end;
  std::string text;
  size_t pos = 0;
  bool escaped = false;  // "\from": a field, not the keyword
};

using FieldRef = std::vector<std::string>;  // "start.pid" -> {"start", "pid"}

struct Item {
  size_t pos = 0;
  FieldRef a;
  char op = 0;  // '+' or '-' between a and b
  FieldRef b;
  std::string cast;  // CAST(a AS <cast>)
  int delta = 0;     // TIMESTAMP_DELTA (1) / TIMESTAMP_DELTA_USECS (2)
  std::string as;
};

struct EventRef {
  size_t pos = 0;
  std::string system, name, alias;
};

struct Match {
  size_t pos = 0;
  FieldRef a, b;
};

struct Statement {
  std::vector<Item> items;
  EventRef from;
  std::optional<EventRef> join;
  std::vector<Match> on;
  std::vector<Token> where;
};

// Case-blind comparison, as SQL keywords are.
bool iequals(std::string_view a, std::string_view b);
// Up to 40 characters of the statement from pos, for an error message.
std::string excerpt(std::string_view sql, size_t pos);

// The statement, or an error naming where it stopped making sense.
Result<Statement> parse_statement(std::string_view sql);

}  // namespace tracebed::tracefs::sql
