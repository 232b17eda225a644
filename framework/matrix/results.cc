#include "framework/matrix/results.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>

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

TestResult TestResult::suite_row(std::string suite_binary, State state, std::string message) {
  TestResult t;
  t.suite = std::move(suite_binary);
  t.name = "(suite)";
  t.state = state;
  t.message = std::move(message);
  return t;
}

int KernelRun::count(State s) const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [s](const TestResult& t) { return t.state == s; }));
}

void KernelRun::stamp_start() {
  std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  timestamp = buf;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) == 0) hostname = host;
}

}  // namespace tracebed::matrix
