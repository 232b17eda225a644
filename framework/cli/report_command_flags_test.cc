// `tracebed report` with trace-cmd's other flags, byte-compared with what
// Debian's `trace-cmd report` (3.1.6) prints on stdout with the same flags,
// for every recorded fixture and, for the flags new in issue 27, the edge
// fixtures (trace-cmd's stderr warnings are ignored).
// Where trace-cmd refuses (a filter naming no event the file has), tracebed
// must refuse too.
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "framework/cli/run_tracebed_for_tests.h"

namespace {

namespace fs = std::filesystem;
using tracebed::cli::test::CliRun;
using tracebed::cli::test::run_tracebed;

struct FlagCase {
  std::string flags;    // as given to both tools
  std::string fixture;  // "recorded/NAME.dat" or "edge/NAME.dat" under fixtures/
};
void PrintTo(const FlagCase& c, std::ostream* os) { *os << c.flags << " " << c.fixture; }

// Where trace-cmd 3.1.6 has no usable output, by fixture stem: skipped.
constexpr const char* kFreed = "trace-cmd 3.1.6 prints from a record its function_graph printer has freed "
                               "(report_golden_test's kReadAheadFreed)";
constexpr const char* kFilterCrash = "trace-cmd 3.1.6 crashes (SIGSEGV) on -F with instances: it filters the "
                                     "instances' records with the top buffer's filter it never set up";
const char* const kInstances[] = {"s13-k6.12-v6-instances", "s22-k7.3-v7zstd-instances-subbuf16k",
                                  "s36-k7.2-v7zstd-instances-function-dropped",
                                  "s46-k7.3-v7none-instances-subbuf16k"};

// Every flag but the listings prints events, and s49 from a freed record.
bool prints_events(const std::string& flags) {
  for (const char* listing : {"-E", "--events", "-f", "-P", "--stat", "--cpus", "--first-event", "--last-event"})
    if (flags.starts_with(listing)) return false;
  return true;
}

// Why a case has no oracle, or null.
const char* skip_reason(const std::string& flags, const std::string& stem) {
  if (prints_events(flags) && stem == "s49-k6.1-v7zstd-function_graph-idle") return kFreed;
  // The listings ignore -F: trace-cmd never filters a record for them.
  if (prints_events(flags) && flags.find("-F ") != std::string::npos)
    for (const char* s : kInstances)
      if (stem == s) return kFilterCrash;
  return nullptr;
}

// Flags whose output is not the event lines are cheap (no records, or one
// pass per CPU): every fixture. The others print the whole report: ~2.5 s
// of trace-cmd and ~1 s of tracebed for the 49 fixtures, each.
// FILE stands for the fixture's path (--ts-offset must follow -i in
// trace-cmd); without it the path comes last.
const char* const kFlags[] = {
    "-q", "-E", "--first-event", "--last-event", "--first-event --last-event", "-I", "-S", "-I -S",
    "--events", "-f", "-P", "--stat",
    // --cpus, by -i too; the flags trace-cmd ignores with it (--stat, --cpu,
    // -t, -l, -w, -F even naming no event) and the stamps it adds.
    "--cpus", "--cpus -i FILE", "--cpus --first-event --last-event", "--cpus --last-event", "--stat --first-event",
    "--first-event --last-event -t", "--first-event --last-event --ts2secs 1000",
    "--cpus --stat", "--cpus --cpu 0 -t", "--cpus -l -w", "--cpus -F nosuchevent", "--cpus -F sched -v -F sched_switch",
    "--ts-diff", "--ts-diff -t", "--ts2secs 1000000", "--ts2secs 3000000000 -t", "--ts2secs 1000000 --ts-diff",
    "-i FILE --ts-offset 1000000000", "-l", "-l -R", "-w",
    // Filters: an event by system/name; strings, ||, <; regex on COMM, &&,
    // !, parentheses; an event list, hex, a field one event lacks; -v; `~`;
    // two filters.
    "-F sched/sched_switch",
    "-F 'sched_switch:prev_comm == \"sh\" || next_pid < 5'",
    "-F '.*:COMM =~ \"^tr.*\" && !(common_pid == 0)'",
    "-F 'sched_switch,sched_wakeup:prev_pid == 0x0 || pid > 100'",
    "-F sched -v -F sched_switch",
    // The kernel's glob operator is no operator of libtraceevent's: `~`
    // parses as a bitwise not, fails on every record, and nothing prints.
    "-F 'sched_switch:prev_comm ~ \"sh*\"'",
    "-F 'sched_switch:prev_comm != \"sh\" && prev_state == 1' -F 'sched_wakeup:comm == \"rcu_preempt\"'",
};

// The new flags' corner cases also on fixtures/edge (unknown event ids,
// big-endian, 32-bit, instances, empty CPUs), but for the zlib file
// Debian's trace-cmd cannot read.
const char* const kEdgeFlags[] = {"--events", "-f", "-P", "--stat", "--cpus", "--cpus --first-event --last-event",
                                  "--cpus --first-event --last-event -t", "-l", "-l -R", "--ts-diff", "-w"};

std::vector<std::string> dat_files(const char* dir) {
  std::vector<std::string> out;
  for (const auto& entry : fs::directory_iterator(fs::path(TRACEBED_SOURCE_DIR) / "fixtures" / dir))
    if (entry.path().extension() == ".dat" && entry.path().stem() != "e11-formats-v7zlib")
      out.push_back(std::string(dir) + "/" + entry.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<FlagCase> cases() {
  std::vector<FlagCase> all;
  for (const char* flags : kFlags)
    for (const std::string& f : dat_files("recorded")) all.push_back({flags, f});
  for (const char* flags : kEdgeFlags)
    for (const std::string& f : dat_files("edge")) all.push_back({flags, f});
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

std::string with_file(const std::string& flags, const std::string& path) {
  const size_t at = flags.find("FILE");
  if (at == std::string::npos) return flags + " " + path;
  return flags.substr(0, at) + path + flags.substr(at + 4);
}

TEST_P(ReportFlags, SameStdoutAsTraceCmd) {
  const FlagCase& c = GetParam();
  const std::string stem = fs::path(c.fixture).stem().string();
  if (const char* why = skip_reason(c.flags, stem)) GTEST_SKIP() << why;
  // The same relative path to both: --first-event prints it.
  fs::current_path(TRACEBED_SOURCE_DIR);
  const std::string args = with_file(c.flags, "fixtures/" + c.fixture);
  int trace_cmd_status = -1;
  const std::string expected = trace_cmd_stdout(args, &trace_cmd_status);
  // popen's shell reports a signal as 128 + its number (die() exits 255).
  const int code = WIFEXITED(trace_cmd_status) ? WEXITSTATUS(trace_cmd_status) : 128 + WTERMSIG(trace_cmd_status);
  ASSERT_FALSE(code > 128 && code < 128 + 32) << "trace-cmd report " << args << " crashed: " << code;
  CliRun run = run_tracebed("report " + args);
  if (code != 0) {
    // trace-cmd refused (a filter naming no event of the file): so must we,
    // with the same (empty) stdout and a message.
    EXPECT_NE(run.status, 0) << "trace-cmd report " << args << " failed; tracebed did not";
    EXPECT_FALSE(run.err.empty());
  } else {
    ASSERT_EQ(run.status, 0) << run.err;
  }
  EXPECT_TRUE(run.out == expected) << "report " << args << ": " << first_difference(expected, run.out);
}

INSTANTIATE_TEST_SUITE_P(Recorded, ReportFlags, testing::ValuesIn(cases()),
                         [](const testing::TestParamInfo<FlagCase>& info) {
                           const std::string file = fs::path(info.param.fixture).filename().string();
                           std::string name = info.param.flags + "_" + file.substr(0, file.find('-'));
                           std::string out;
                           for (char c : name) out += isalnum(static_cast<unsigned char>(c)) ? c : '_';
                           // Filters differ in punctuation only: number them.
                           return out + "_" + std::to_string(info.index);
                         });

}  // namespace
