// Our report against libtracecmd's own iteration (tracecmd_peer.h) on the
// function_graph fixtures, record by record: the CPU and the text after the
// event name. Where `trace-cmd report` 3.1.6 cannot be the oracle (s49: its
// report loop keeps a pointer to a record the function_graph printer has
// read ahead and freed, so its order follows glibc's malloc), the library it
// is built from still has one defined order, tracecmd_read_next_data, and
// prints each record with the same function_graph printer.
#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "framework/decode/fixture_text_for_tests.h"
#include "framework/decode/report.h"
#include "framework/decode/tools/tracecmd_peer.h"
#include "framework/decode/trace_dat.h"

// Debian's libtracecmd 3.1.6 leaks the 7-byte clock name sscanf allocates in
// tracecmd_parse_trace_clock on every open; the sanitizer build checks our
// leaks, not its. Unwinding slowly lets the suppression see that frame.
extern "C" const char* __asan_default_options() { return "fast_unwind_on_malloc=0"; }
extern "C" const char* __lsan_default_suppressions() { return "leak:tracecmd_parse_trace_clock\n"; }

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;

struct Line {
  int cpu = -1;
  std::string info;
};

std::vector<Line> libtracecmd_lines(const fs::path& trace) {
  std::vector<Line> lines;
  auto add = [](void* ctx, int cpu, const char* info) { static_cast<std::vector<Line>*>(ctx)->push_back({cpu, info}); };
  EXPECT_EQ(tracecmd_peer_info_lines(trace.c_str(), add, &lines), 0) << trace;
  return lines;
}

// Our default report, each record line cut into its CPU and its text:
// "<comm>-<pid> [<cpu>] <secs>: <event>: " with the event name padded to 20
// columns, as trace-read.c prints it. Other lines (cpus=, dropped events)
// are not records.
std::vector<Line> our_lines(const fs::path& trace) {
  std::vector<Line> lines;
  auto file = TraceDat::open(trace.string());
  EXPECT_TRUE(file.ok()) << (file.ok() ? "" : file.error().message);
  if (!file.ok()) return lines;
  std::string text;
  Status status = report_text(**file, ReportOptions{}, text);
  EXPECT_TRUE(status.ok()) << (status.ok() ? "" : status.error().message);
  static const std::regex head(R"( \[(\d{3,})\] +\d+\.\d+: ([^ :]+): )");
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) {
    std::smatch m;
    if (!std::regex_search(l, m, head)) continue;
    const size_t name = static_cast<size_t>(m[2].length());
    const size_t pad = name < 20 ? 20 - name : 0;
    const size_t at = static_cast<size_t>(m.position(0) + m.length(0)) + pad;
    lines.push_back({std::stoi(m[1].str()), at <= l.size() ? l.substr(at) : std::string()});
  }
  return lines;
}

std::vector<fs::path> function_graph_fixtures() {
  std::vector<fs::path> traces;
  const fs::path root = fs::path(TRACEBED_SOURCE_DIR) / "fixtures/recorded";
  for (const auto& entry : fs::directory_iterator(root))
    if (entry.path().extension() == ".dat" && entry.path().stem().string().find("function_graph") != std::string::npos)
      traces.push_back(entry.path());
  std::sort(traces.begin(), traces.end());
  return traces;
}

class LibtracecmdOrder : public testing::TestWithParam<fs::path> {};

TEST_P(LibtracecmdOrder, ReportIsLibtracecmdsReadNextDataOrderAndText) {
  const std::vector<Line> want = libtracecmd_lines(GetParam());
  const std::vector<Line> got = our_lines(GetParam());
  ASSERT_FALSE(want.empty());
  ASSERT_EQ(got.size(), want.size()) << "records printed";
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].cpu, want[i].cpu) << "record " << i << ": " << want[i].info;
    // libtraceevent pads some texts with trailing spaces that the report line keeps.
    ASSERT_EQ(got[i].info, want[i].info) << "record " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Fixtures, LibtracecmdOrder, testing::ValuesIn(function_graph_fixtures()),
                         [](const testing::TestParamInfo<fs::path>& info) { return test_name(info.param.stem().string()); });

}  // namespace
}  // namespace tracebed::decode
