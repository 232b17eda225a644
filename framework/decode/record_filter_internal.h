// What record_filter.cc (events, evaluation) and record_filter_parse.cc
// (libtraceevent's expression parser) share; record_filter.h is the API.
#pragma once

#include <regex.h>

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"
#include "framework/decode/record_filter.h"

namespace tracebed::decode::filter {

// A POSIX regular expression compiled with REG_ICASE | REG_NOSUB, as
// libtraceevent compiles event names and =~ operands.
class Regex {
 public:
  static Result<std::shared_ptr<Regex>> compile(const std::string& pattern);
  ~Regex();
  bool matches(const std::string& text) const;

 private:
  Regex() = default;
  regex_t re_{};
  bool compiled_ = false;
};

// parse-filter.c's tep_filter_arg kinds.
enum class Kind : uint8_t { boolean, op, num, str, value, field, exp };
enum class Op : uint8_t { and_, or_, not_ };
enum class Cmp : uint8_t { none, eq, ne, gt, lt, ge, le, match, not_match, regex, not_regex };
enum class Exp : uint8_t { none, add, sub, mul, div, mod, rshift, lshift, and_, or_, xor_, not_ };
enum class ValueType : uint8_t { number, string, character };
enum class Special : uint8_t { none, comm, cpu };

struct Node {
  Kind kind = Kind::boolean;
  bool boolean = false;
  Op op = Op::and_;
  Cmp cmp = Cmp::none;
  Exp exp = Exp::none;
  ValueType value_type = ValueType::number;
  uint64_t number = 0;
  std::string text;                // a value's string, a string compare's operand
  std::shared_ptr<Regex> regex;    // =~ and !~
  const Field* field = nullptr;    // field nodes and string compares
  Special special = Special::none; // COMM, CPU
  int left = -1, right = -1;       // children, indices into the tree's nodes
};

// One event's expression: nodes by index, the root last set.
struct Expr {
  std::vector<Node> nodes;
  int root = -1;
};

// Parses `text` for `event` as libtraceevent's process_event does; an
// error says what and at which byte of `text`.
Result<Expr> parse_expression(const EventFormat& event, std::string_view text);

}  // namespace tracebed::decode::filter

namespace tracebed::decode {

// One -F filter: an expression per event id it names.
struct RecordFilter::Tree {
  std::unordered_map<uint32_t, filter::Expr> by_id;
};

}  // namespace tracebed::decode
