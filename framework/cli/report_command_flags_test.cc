// `tracebed report` with trace-cmd's other flags, byte-compared with what
// Debian's `trace-cmd report` (3.1.6) prints on stdout with the same flags,
// for every recorded fixture (trace-cmd's stderr warnings are ignored).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_test.h"

namespace {

namespace fs = std::filesystem;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

struct FlagCase {
  std::string flags;    // as given to both tools
  std::string fixture;  // file name in fixtures/recorded
};

// Where trace-cmd 3.1.6's own output is wrong, by fixture stem: skipped.
struct Skip {
  const char* flags;  // null: with every flag that prints the events
  const char* stem;
  const char* why;
};
const Skip kSkips[] = {
    {"-q", "s49-k6.1-v7zstd-function_graph-idle",
     "trace-cmd 3.1.6 prints this report from a record its function_graph printer has freed "
     "(report_golden_test's kReadAheadFreed)"},
    {"-I", "s49-k6.1-v7zstd-function_graph-idle", "trace-cmd 3.1.6 prints from a freed record (see -q)"},
    {"-S", "s49-k6.1-v7zstd-function_graph-idle", "trace-cmd 3.1.6 prints from a freed record (see -q)"},
    {"-I -S", "s49-k6.1-v7zstd-function_graph-idle", "trace-cmd 3.1.6 prints from a freed record (see -q)"},
};

// Flags whose output is not the event lines are cheap (no records, or one
// pass per CPU): every fixture. -q prints the whole report: every fixture
// too, ~2.5 s of trace-cmd and ~1 s of tracebed for the 49 of them, and
// so do -I and -S.
const char* const kFlags[] = {"-q", "-E", "--first-event", "--last-event",
                              "--first-event --last-event", "-I", "-S", "-I -S"};

std::vector<FlagCase> cases() {
  std::vector<std::string> fixtures;
  for (const auto& entry : fs::directory_iterator(fs::path(TRACEBED_SOURCE_DIR) / "fixtures/recorded"))
    if (entry.path().extension() == ".dat") fixtures.push_back(entry.path().filename().string());
  std::sort(fixtures.begin(), fixtures.end());
  std::vector<FlagCase> all;
  for (const char* flags : kFlags)
    for (const std::string& f : fixtures) all.push_back({flags, f});
  return all;
}

std::string trace_cmd_stdout(const std::string& args, int* status) {
  std::string cmd = "trace-cmd report " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {};
  std::string out;
  char buf[65536];
  for (size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  *status = pclose(p);
  return out;
}

// The first line that differs, rather than megabytes of text.
std::string first_difference(const std::string& expected, const std::string& actual) {
  size_t at = 0;
  while (at < expected.size() && at < actual.size() && expected[at] == actual[at]) ++at;
  const size_t line_start = expected.rfind('\n', at == 0 ? 0 : at - 1);
  const size_t from = line_start == std::string::npos ? 0 : line_start + 1;
  auto line_of = [&](const std::string& s) { return s.substr(from, s.find('\n', from) - from); };
  return "at byte " + std::to_string(at) + "\n  trace-cmd: " + line_of(expected) + "\n  tracebed:  " + line_of(actual);
}

class ReportFlags : public testing::TestWithParam<FlagCase> {};

TEST_P(ReportFlags, SameStdoutAsTraceCmd) {
  const FlagCase& c = GetParam();
  const std::string stem = c.fixture.substr(0, c.fixture.rfind('.'));
  for (const Skip& s : kSkips)
    if ((!s.flags || c.flags == s.flags) && stem == s.stem) GTEST_SKIP() << s.why;
  // The same relative path to both: --first-event prints it.
  fs::current_path(TRACEBED_SOURCE_DIR);
  const std::string path = "fixtures/recorded/" + c.fixture;
  const std::string args = c.flags + " " + path;
  int trace_cmd_status = -1;
  const std::string expected = trace_cmd_stdout(args, &trace_cmd_status);
  ASSERT_EQ(trace_cmd_status, 0) << "trace-cmd report " << args;
  CliRun run = run_tracebed("report " + args);
  ASSERT_EQ(run.status, 0) << run.err;
  EXPECT_TRUE(run.out == expected) << "report " << args << ": " << first_difference(expected, run.out);
}

INSTANTIATE_TEST_SUITE_P(Recorded, ReportFlags, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<FlagCase>& info) {
                           std::string name = info.param.flags + "_" +
                                              info.param.fixture.substr(0, info.param.fixture.find('-'));
                           std::string out;
                           for (char c : name) out += isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           return out;
                         });

}  // namespace
