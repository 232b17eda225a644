// The results of running the guest suites on several kernels: one KernelRun
// per kernel, one TestResult per GoogleTest case, exactly as the suites
// reported them (gtest's JUnit XML), plus what the runner saw itself (a suite
// that died without a report, the tail of its log).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace tracebed::matrix {

// unresolved: the test ran and could not decide (ftracetest's UNRESOLVED),
// neither a pass nor a failure. gtest has only pass, skip and fail, so such a
// case arrives as a skip carrying the property result=unresolved
// (kUnresolvedProperty) and leaves as JUnit's <error>.
enum class State { pass, skip, fail, unresolved };

std::string_view state_name(State s);  // "pass", "skip", "fail", "unresolved"
std::optional<State> parse_state(std::string_view name);

// The property a suite records on a skipped case that is unresolved.
inline constexpr std::pair<std::string_view, std::string_view> kUnresolvedProperty = {"result", "unresolved"};

struct TestResult {
  std::string suite;    // gtest suite name (Basics), or the suite binary for a "(suite)" row
  std::string name;     // gtest case name, or "(suite)" when the binary died without a report
  State state = State::pass;
  std::string message;  // skip reason or failure text, without gtest's "file:line" first line
  std::string location; // "file:line" of the skip or first failure, if any
  std::string console;  // log/console excerpt when the suite died
  double seconds = 0;
  // When the test started its binary's guest (framework/testing stamps the
  // test that waited for it): how and how long it took, part of `seconds`.
  struct GuestStart {
    std::string kind;  // "boot" or "restore" (from a snapshot); empty: none
    double seconds = 0;
  } guest_start;
  // The case's own properties as the suite recorded them (RecordProperty:
  // launcher, tool, perf_package, ...), in their order.
  std::vector<std::pair<std::string, std::string>> properties;

  std::string full_name() const { return suite + "." + name; }
  // A "(suite)" row: what happened to a suite binary as a whole.
  static TestResult suite_row(std::string suite_binary, State state, std::string message);
  // The first line of the message (table cells, KTAP SKIP reasons).
  std::string summary() const;
  bool has_property(std::string_view name, std::string_view value) const;
};

// How many tests ended in each state.
struct Counts {
  int pass = 0, skip = 0, unresolved = 0, fail = 0;
  void add(State s);
  void add(const Counts& c);
  int total() const { return pass + skip + unresolved + fail; }
  // "545 passed, 116 skipped, 0 failed"; "N unresolved" before the failures
  // only when there are some, so a run without any reads as it always did.
  std::string text() const;
};
Counts count_states(const std::vector<TestResult>& tests);

// What a run's results add up to, for an exit status. Failed tests that
// failed on their own come first; a test whose guest never booted
// (framework/testing/guest_environment.cc: "booting the K guest failed: …")
// tested nothing, and neither did a suite killed at its timeout.
enum class Verdict { passed, failed, timed_out, not_tested };

// The words the runner uses for a suite it killed at its timeout.
inline constexpr std::string_view kDidNotFinish = "did not finish within";

// failed if any test failed other than by a guest that did not boot or a
// suite that timed out; else not_tested if a guest did not boot; else
// timed_out if a suite did; else passed (skips pass; so does no test).
// Unresolved tests do not fail a run either: ftracetest itself exits 0 on
// UNRESOLVED unless given --fail-unresolved; the summaries count them apart.
Verdict verdict(const std::vector<TestResult>& tests);

struct KernelRun {
  std::string kernel;            // catalogue name or image path
  std::string release;           // uname -r as the guest reported it; empty if no test got a guest
  std::string expected_release;  // the catalogue's release, shown when nothing was reported
  std::string accelerator;       // kvm or tcg, as reported
  double wall_seconds = 0;
  std::string timestamp;         // when the run started, ISO 8601 UTC (JUnit's timestamp)
  std::string hostname;          // where it ran
  std::string stamp;             // what the results depend on (resume)
  std::vector<TestResult> tests;

  int count(State s) const;
  Counts counts() const { return count_states(tests); }
  // Its one result is boot_check.h's did_not_boot() row: no suite ran.
  bool did_not_boot() const;
  // Sets timestamp to now and hostname to this machine's.
  void stamp_start();
};

struct Matrix {
  std::string filter;
  std::vector<KernelRun> kernels;
};

}  // namespace tracebed::matrix
