// `tracebed report` as a user runs it: exit status, stdout and stderr.
#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include <cstdio>

#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_tests.h"

namespace {

namespace fs = std::filesystem;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

class CorruptInput : public testing::TestWithParam<std::string> {};

// Every corrupt fixture: non-zero exit and exactly one stderr line that
// names the file and a byte offset (the reader's tests pin each message).
TEST_P(CorruptInput, OneLineNamingFileAndOffset) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/corrupt/" + GetParam();
  CliRun run = run_tracebed("report -i " + path);
  EXPECT_EQ(run.status, 1) << run.err;
  ASSERT_FALSE(run.err.empty());
  EXPECT_EQ(run.err.find('\n'), run.err.size() - 1) << "more than one line: " << run.err;
  EXPECT_EQ(run.err.rfind("tracebed: " + path + ": offset 0x", 0), 0u) << run.err;
}

std::vector<std::string> corrupt_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::directory_iterator(fs::path(TRACEBED_SOURCE_DIR) / "fixtures/corrupt"))
    if (entry.path().extension() == ".dat") files.push_back(entry.path().filename().string());
  std::sort(files.begin(), files.end());
  return files;
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CorruptInput, testing::ValuesIn(corrupt_files()),
                         [](const testing::TestParamInfo<std::string>& info) {
                           std::string name = info.param.substr(0, info.param.find('.'));
                           for (char& c : name)
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           return name;
                         });

// `tracebed report FILE` as `trace-cmd report FILE`: the file positional,
// the same output as -i, and as Debian's trace-cmd prints it.
TEST(ReportCommand, PositionalFileAsTraceCmdTakesIt) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/recorded/s35-k6.1-v7zstd-clock-uptime.dat";
  CliRun positional = run_tracebed("report " + path);
  CliRun dash_i = run_tracebed("report -i " + path);
  ASSERT_EQ(positional.status, 0) << positional.err;
  EXPECT_EQ(positional.out, dash_i.out);
  std::string oracle = "trace-cmd report " + path + " 2>/dev/null";
  FILE* p = popen(oracle.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string expected;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) expected.append(buf, n);
  ASSERT_EQ(pclose(p), 0) << "trace-cmd report " << path;
  EXPECT_EQ(positional.out, expected);
  CliRun both = run_tracebed("report " + path + " -i /elsewhere.dat");
  EXPECT_EQ(both.status, 2);  // usage
  EXPECT_NE(both.err.find("two input files"), std::string::npos) << both.err;
}

TEST(ReportCommand, MissingFileSaysSo) {
  CliRun run = run_tracebed("report -i /nonexistent/trace.dat");
  EXPECT_EQ(run.status, 1);
  EXPECT_NE(run.err.find("/nonexistent/trace.dat"), std::string::npos) << run.err;
  EXPECT_TRUE(run.out.empty());
}

TEST(ReportCommand, BadCpuListIsRefused) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/edge/e08-empty-cpus-v7none.dat";
  CliRun run = run_tracebed("report --cpu 3-1 -i " + path);
  EXPECT_EQ(run.status, 2);  // usage
  EXPECT_NE(run.err.find("bad CPU list '3-1'"), std::string::npos) << run.err;
}

// A CPU list is bounded and exact: a huge range is refused at once (not
// expanded into billions of entries), as are negative numbers and junk.
TEST(ReportCommand, CpuListOutOfRangeOrMalformedIsAUsageError) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/edge/e08-empty-cpus-v7none.dat";
  for (auto [list, says] : {std::pair{"0-2000000000", "CPU 2000000000 is beyond 8191"},
                            {"-1", "'-1' is not a CPU number"},
                            {"1-2-3", "'1-2-3' is not N or N-M"},
                            {"x", "'x' is not a CPU number"}}) {
    SCOPED_TRACE(list);
    CliRun run = run_tracebed(std::string("report --cpu ") + list + " -i " + path);
    EXPECT_EQ(run.status, 2);
    EXPECT_NE(run.err.find(says), std::string::npos) << run.err;
  }
}

// --cpu takes lists and ranges; CPUs 1 and 3 hold all of this file's events.
TEST(ReportCommand, CpuListSelectsCpus) {
  std::string path = std::string(TRACEBED_SOURCE_DIR) + "/fixtures/edge/e08-empty-cpus-v7none.dat";
  CliRun all = run_tracebed("report -i " + path);
  CliRun some = run_tracebed("report --cpu 1,3 -i " + path);
  CliRun none = run_tracebed("report --cpu 0,2 -i " + path);
  ASSERT_EQ(all.status, 0) << all.err;
  EXPECT_EQ(some.out, all.out);
  EXPECT_EQ(none.out, "cpus=4\n");
}

}  // namespace
