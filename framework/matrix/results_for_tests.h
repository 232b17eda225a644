// One test's result as the matrix tests build them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "framework/matrix/results.h"

namespace tracebed::matrix {

inline TestResult result(std::string suite, std::string name, State state, std::string message = "") {
  TestResult t;
  t.suite = std::move(suite);
  t.name = std::move(name);
  t.state = state;
  t.message = std::move(message);
  return t;
}

// The same with the JUnit properties a suite records (ftracetest's verdicts).
inline TestResult result_with_properties(std::string suite, std::string name, State state,
                                         std::vector<std::pair<std::string, std::string>> properties,
                                         std::string message = "") {
  TestResult t = result(std::move(suite), std::move(name), state, std::move(message));
  t.properties = std::move(properties);
  return t;
}

}  // namespace tracebed::matrix
