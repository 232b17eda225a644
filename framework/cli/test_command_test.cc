// `tracebed test` and the top level as a user runs them, without guests:
// listing, choosing suites, and refusing bad input with the valid choices.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_tests.h"

namespace {

using ::testing::HasSubstr;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

TEST(Cli, VersionEnvironmentAndExitStatusInHelp) {
  CliRun v = run_tracebed("--version");
  EXPECT_EQ(v.status, 0);
  EXPECT_THAT(v.out, ::testing::StartsWith("tracebed 0."));
  CliRun h = run_tracebed("--help");
  EXPECT_EQ(h.status, 0);
  for (const char* var : {"TRACEBED_CACHE", "TRACEBED_CATALOGUE", "TRACEBED_LAUNCHER", "TRACEBED_NO_SNAPSHOT"})
    EXPECT_THAT(h.out, HasSubstr(var));
  EXPECT_THAT(h.out, HasSubstr("Exit status (every command):\n  0 "));
  for (const char* code : {"\n  1 ", "\n  2 ", "\n  124 ", "\n  125 "}) EXPECT_THAT(h.out, HasSubstr(code));
  CliRun none = run_tracebed("");
  EXPECT_EQ(none.status, 2);  // usage
  EXPECT_THAT(none.err, HasSubstr("Subcommands:"));
}

TEST(TestCommand, ListsTheChosenSuitesCases) {
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  CliRun r = run_tracebed("test --list --suites Smoke --filter 'Smoke.Copy*'");
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("smoke (tracebed_suite_smoke): 1 tests\n  Smoke.CopyInAndOut\n"));
  EXPECT_THAT(r.out, HasSubstr("1 tests match --filter 'Smoke.Copy*'"));
}

TEST(TestCommand, AnUnknownSuiteListsTheValidOnes) {
  TRACEBED_SKIP_WITHOUT_SUITE_BINARIES();
  CliRun r = run_tracebed("test --suites no_such_suite");
  EXPECT_EQ(r.status, 2);  // usage
  EXPECT_THAT(r.err, HasSubstr("no suite named no_such_suite (suites: smoke, "));
}

TEST(TestCommand, AcceleratorAndTimeoutAreChecked) {
  EXPECT_THAT(run_tracebed("test --accel kvmm --list").err, HasSubstr("--accel: kvmm not in {kvm,tcg}"));
  // Every command's --timeout: whole seconds, 1 to a week, and the error says so.
  for (const char* bad : {"test --timeout 0 --list", "test --timeout inf --list", "run --timeout -5 -- true",
                          "run --timeout nan -- true", "matrix --timeout 604801", "matrix --timeout 1.5"}) {
    CliRun r = run_tracebed(bad);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("is not a whole number of seconds from 1 to 604800 (a week)")) << bad;
  }
  EXPECT_THAT(run_tracebed("run --accel qemu -- true").err, HasSubstr("not in {kvm,tcg}"));
}

}  // namespace
