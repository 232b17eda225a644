#include "framework/matrix/results.h"

#include <algorithm>

namespace tracebed::matrix {

std::string_view state_name(State s) {
  switch (s) {
    case State::pass: return "pass";
    case State::skip: return "skip";
    case State::fail: return "fail";
  }
  return "?";
}

std::optional<State> parse_state(std::string_view name) {
  if (name == "pass") return State::pass;
  if (name == "skip") return State::skip;
  if (name == "fail") return State::fail;
  return std::nullopt;
}

std::string TestResult::summary() const {
  std::string_view m = message;
  while (!m.empty() && (m.front() == '\n' || m.front() == ' ')) m.remove_prefix(1);
  return std::string(m.substr(0, m.find('\n')));
}

int KernelRun::count(State s) const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [s](const TestResult& t) { return t.state == s; }));
}

}  // namespace tracebed::matrix
