// The tests whose state changed between two matrix runs: new failures
// first, then fixed tests, then every other change (a new skip, a test that
// appeared or disappeared).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "framework/matrix/results.h"

namespace tracebed::matrix {

struct Change {
  enum Kind { new_failure, fixed, other } kind;
  std::string kernel;
  std::string test;                // Suite.Name
  std::optional<State> before;     // nullopt: not in that run
  std::optional<State> after;
  std::string message;             // the new run's message, if any
};

std::vector<Change> compare(const Matrix& before, const Matrix& after);

// One line per change, grouped under headings; "no changes" when empty.
std::string format_changes(const std::vector<Change>& changes);

}  // namespace tracebed::matrix
