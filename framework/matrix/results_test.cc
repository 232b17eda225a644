#include "framework/matrix/results.h"

#include <gtest/gtest.h>

#include "framework/matrix/runner.h"

namespace tracebed::matrix {
namespace {

TestResult test(State state, std::string message = "") {
  TestResult t;
  t.suite = "Smoke";
  t.name = "Boots";
  t.state = state;
  t.message = std::move(message);
  return t;
}

// As gtest reports the exception testlib::guest() throws when the guest
// did not boot (framework/testing/guest_environment.cc).
const std::string kNoGuest =
    "C++ exception with description \"booting the debian-6.12 guest failed: QEMU exited with status 1\" thrown in the "
    "test body.";

// A suite the runner killed at its timeout, in the runner's own words.
TestResult killed() {
  std::string release, accel;
  auto rows = suite_results("tracebed_suite_smoke", "/nonexistent/junit.xml", 137, true, std::chrono::seconds(2),
                            "/nonexistent/log", &release, &accel);
  EXPECT_EQ(rows.size(), 1u);
  return rows.empty() ? TestResult{} : rows.front();
}

TEST(Verdict, FromTheResults) {
  EXPECT_EQ(verdict({}), Verdict::passed);
  EXPECT_EQ(verdict({test(State::pass), test(State::skip, "needs hist triggers")}), Verdict::passed);
  EXPECT_EQ(verdict({test(State::pass), test(State::fail, "Expected: 3 hits, got 2")}), Verdict::failed);
  EXPECT_EQ(verdict({test(State::fail, kNoGuest), test(State::fail, kNoGuest)}), Verdict::not_tested);
  EXPECT_EQ(verdict({test(State::pass), killed()}), Verdict::timed_out);
}

// ftracetest exits 0 on UNRESOLVED (without --fail-unresolved): so do we.
TEST(Verdict, UnresolvedDoesNotFailTheRun) {
  EXPECT_EQ(verdict({test(State::pass), test(State::unresolved, "ftracetest UNRESOLVED on the top level")}),
            Verdict::passed);
  EXPECT_EQ(verdict({test(State::unresolved), test(State::fail, "wrong")}), Verdict::failed);
}

TEST(State, NamesRoundTrip) {
  for (State s : {State::pass, State::skip, State::fail, State::unresolved}) EXPECT_EQ(parse_state(state_name(s)), s);
  EXPECT_EQ(state_name(State::unresolved), "unresolved");
  EXPECT_EQ(parse_state("error"), std::nullopt);
}

TEST(Counts, UnresolvedOnlyWhenThereAreSome) {
  Counts c = count_states({test(State::pass), test(State::skip), test(State::fail)});
  EXPECT_EQ(c.text(), "1 passed, 1 skipped, 1 failed");
  c.add(State::unresolved);
  EXPECT_EQ(c.text(), "1 passed, 1 skipped, 1 unresolved, 1 failed");
  EXPECT_EQ(c.total(), 4);
}

TEST(Verdict, AFailureOfItsOwnComesFirst) {
  EXPECT_EQ(verdict({test(State::fail, kNoGuest), killed(), test(State::fail, "wrong")}), Verdict::failed);
  EXPECT_EQ(verdict({killed(), test(State::fail, kNoGuest)}), Verdict::not_tested);
  // Only a "(suite)" row speaks for the runner: a test may say those words.
  EXPECT_EQ(verdict({test(State::fail, "did not finish within 5 s")}), Verdict::failed);
}

}  // namespace
}  // namespace tracebed::matrix
