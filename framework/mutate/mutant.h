// Mutants of a C file: one-token changes on code lines of function bodies,
// each an operator of the classic mutation-analysis set (docs/mutation.md
// has an example of each).
//
//   for (const Mutant& m : mutants_of("kernel/trace/trace.c", CSource::parse(text))) ...
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/mutate/c_source.h"

namespace tracebed::mutate {

enum class Operator {
  relational_boundary,  // <  <=, >  >= (both ways)
  equality,             // ==  !=
  logical,              // &&  ||
  negated_condition,    // if (c) -> if (!(c)); while too
  off_by_one_removed,   // x + 1 -> x, x - 1 -> x
  constant_plus_one,    // 16 -> 17, 0x10 -> 0x11
  call_removed,         // f(a, b); -> ;
  return_value,         // return 0 <-> 1, return -EINVAL -> 0, true <-> false
};

inline constexpr Operator kAllOperators[] = {
    Operator::relational_boundary, Operator::equality,         Operator::logical,
    Operator::negated_condition,   Operator::off_by_one_removed, Operator::constant_plus_one,
    Operator::call_removed,        Operator::return_value};

std::string_view operator_name(Operator op);  // "relational-boundary", ...
bool parse_operator(std::string_view name, Operator* out);

struct Mutant {
  std::string file;      // as given (relative to the tree)
  std::string function;
  size_t line = 0;       // 1-based, of the first byte replaced
  size_t offset = 0;     // bytes [offset, offset + length) are replaced
  size_t length = 0;
  std::string replacement;
  Operator op = Operator::relational_boundary;
  std::string original_line, mutated_line;  // the whole line before and after

  // A short stable name: file:line:operator:hash of the change.
  std::string id() const;
  // The file's text with this mutant applied.
  std::string apply(std::string_view text) const;
  // A unified diff of the one line, with file:line in its header.
  std::string diff() const;
};

// Every mutant of the file, in file order; on one line, mutants that make
// the same line are kept once.
std::vector<Mutant> mutants_of(const std::string& file, const CSource& source);

}  // namespace tracebed::mutate
