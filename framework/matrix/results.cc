#include "framework/matrix/results.h"

#include <unistd.h>

#include <algorithm>
#include <ctime>

#include <fmt/format.h>

namespace tracebed::matrix {

std::string_view state_name(State s) {
  switch (s) {
    case State::pass: return "pass";
    case State::skip: return "skip";
    case State::fail: return "fail";
    case State::unresolved: return "unresolved";
  }
  return "?";
}

std::optional<State> parse_state(std::string_view name) {
  if (name == "pass") return State::pass;
  if (name == "skip") return State::skip;
  if (name == "fail") return State::fail;
  if (name == "unresolved") return State::unresolved;
  return std::nullopt;
}

std::string TestResult::summary() const {
  std::string_view m = message;
  while (!m.empty() && (m.front() == '\n' || m.front() == ' ')) m.remove_prefix(1);
  return std::string(m.substr(0, m.find('\n')));
}

bool TestResult::has_property(std::string_view name, std::string_view value) const {
  return std::any_of(properties.begin(), properties.end(),
                     [&](const auto& kv) { return kv.first == name && kv.second == value; });
}

void Counts::add(State s) {
  switch (s) {
    case State::pass: ++pass; break;
    case State::skip: ++skip; break;
    case State::unresolved: ++unresolved; break;
    case State::fail: ++fail; break;
  }
}

void Counts::add(const Counts& c) {
  pass += c.pass;
  skip += c.skip;
  unresolved += c.unresolved;
  fail += c.fail;
}

std::string Counts::text() const {
  std::string undecided = unresolved > 0 ? fmt::format("{} unresolved, ", unresolved) : "";
  return fmt::format("{} passed, {} skipped, {}{} failed", pass, skip, undecided, fail);
}

Counts count_states(const std::vector<TestResult>& tests) {
  Counts c;
  for (const auto& t : tests) c.add(t.state);
  return c;
}

TestResult TestResult::suite_row(std::string suite_binary, State state, std::string message) {
  TestResult t;
  t.suite = std::move(suite_binary);
  t.name = "(suite)";
  t.state = state;
  t.message = std::move(message);
  return t;
}

Verdict verdict(const std::vector<TestResult>& tests) {
  bool not_tested = false, timed_out = false;
  for (const auto& t : tests) {
    if (t.state != State::fail) continue;
    const bool no_guest = t.message.find("booting the ") != std::string::npos &&
                          t.message.find(" guest failed: ") != std::string::npos;
    const bool killed = t.name == "(suite)" && t.message.find(kDidNotFinish) != std::string::npos;
    if (!no_guest && !killed) return Verdict::failed;
    not_tested |= no_guest;
    timed_out |= killed;
  }
  return not_tested ? Verdict::not_tested : timed_out ? Verdict::timed_out : Verdict::passed;
}

int KernelRun::count(State s) const {
  return static_cast<int>(std::count_if(tests.begin(), tests.end(), [s](const TestResult& t) { return t.state == s; }));
}

bool KernelRun::did_not_boot() const {
  return tests.size() == 1 && tests[0].suite == "(kernel)" && tests[0].name == "(boot)";
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
