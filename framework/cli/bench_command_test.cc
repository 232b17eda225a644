// `tracebed bench` as a user runs it: both tools timed on a small fixture,
// their text compared; a tool that cannot run is named, never "identical".
#include <string>

#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_tests.h"

namespace {

using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

const std::string kFixture = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/s19-k7.2rt-v7zstd-timerlat.dat";

TEST(BenchCommand, TimesBothToolsAndComparesTheirText) {
  if (access("/usr/bin/trace-cmd", X_OK) != 0) GTEST_SKIP() << "needs trace-cmd: /usr/bin/trace-cmd missing";
  CliRun run = run_tracebed("bench --runs 1 " + kFixture);
  ASSERT_EQ(run.status, 0) << run.out << run.err;
  EXPECT_NE(run.out.find("772 records"), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\nreport    1 "), std::string::npos) << run.out;
  EXPECT_NE(run.out.find("\noutput    identical (79584 bytes of report text)\n"), std::string::npos) << run.out;
  EXPECT_EQ(run.out.find("error"), std::string::npos) << run.out;
}

TEST(BenchCommand, AToolThatCannotRunIsNamedAndNothingIsCalledIdentical) {
  CliRun run = run_tracebed("bench --runs 1 --trace-cmd /nonexistent/trace-cmd " + kFixture);
  EXPECT_EQ(run.status, 1) << run.out << run.err;
  EXPECT_NE(run.out.find("\nerror     cannot run /nonexistent/trace-cmd: No such file or directory\n"),
            std::string::npos)
      << run.out;
  EXPECT_EQ(run.out.find("identical"), std::string::npos) << run.out;
  EXPECT_NE(run.err.find("not compared"), std::string::npos) << run.err;
}

}  // namespace
