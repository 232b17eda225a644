// TraceCmdTest: the fixture of the tests that run trace-cmd (the host's,
// copied into the guest with its libraries and libtraceevent's plugins by
// `tracebed_guest_suite(... TRACE_CMD)`) and check its recordings against
// an independent reader: the trace.dat is fetched to the host, where our
// decoder's report must be byte-identical to `trace-cmd report` run on the
// HOST (same trace-cmd build, same plugins), and the events it holds must
// be exactly those the command line asked for:
//
//   TEST_F(TraceCmdSuite, RecordsTheMarker) {
//     auto rec = record_and_compare({"-e", "sched:sched_switch"}, {"sleep", "1"}, {"sched:sched_switch"});
//     EXPECT_THAT(rec.report, HasSubstr(" ==> ")) << where(rec.cmdline);
//   }
//
// Without a host trace-cmd when the suite was configured, its tests skip.
#pragma once

#include <filesystem>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/testing/tool_fixture.h"

namespace tracebed::testlib {

// Where `tracebed_guest_suite(... TRACE_CMD)` puts trace-cmd in the guest.
inline constexpr std::string_view kGuestTraceCmd = "/opt/tracebed/bin/trace-cmd";
// In the guest's /tmp (tmpfs): trace-cmd writes its per-CPU temporary files
// beside the output.
inline constexpr std::string_view kGuestTraceDat = "/tmp/tracebed-tc.dat";

// The host's trace-cmd found when the build was configured; empty if none.
std::string_view host_trace_cmd();

// The first differing lines of two texts, with a little context: enough to
// see a column or a rounding difference without printing two reports.
std::string line_diff(std::string_view expected, std::string_view actual, std::string_view expected_name,
                      std::string_view actual_name);

// Our decoder's report of a trace.dat, as `tracebed report -i file` prints it.
Result<std::string> tracebed_report(const std::filesystem::path& file);

// The oracle: `trace-cmd report -i file` run on the host; stdout only (it
// warns on stderr, e.g. about formats it cannot parse).
Result<std::string> host_trace_cmd_report(const std::filesystem::path& file);

// The events ("system:name") in every buffer of the file, decoded by us.
Result<std::set<std::string>> trace_dat_event_names(const std::filesystem::path& file);

class TraceCmdTest : public ToolTest {
 public:
  using ToolTest::ToolTest;
  ~TraceCmdTest() override;

 protected:
  // Skips without a host trace-cmd; saves the top level (trace-cmd works on
  // it unless given -B) for the fixture's reset.
  void SetUpTest() override;
  void TearDown() override;

  // A guest file copied to the host, into a directory removed with the test.
  std::filesystem::path fetch(std::string_view guest_path);

  // What a recording left: the command line, the host copy, trace-cmd's
  // report of it and ours (empty when a step failed; the failure is
  // already added).
  struct Recording {
    std::string cmdline;
    std::filesystem::path file;
    std::string report;
    std::string our_report;
  };
  // `trace-cmd record -o kGuestTraceDat options... command...` in the
  // guest. The command starts once every CPU's recorder has opened its
  // trace_pipe_raw: trace-cmd stops its recorders with SIGUSR1 when the
  // command ends, and a recorder that gets it before it has set up exits
  // without reading (0 bytes for its CPU; trace-cmd 3.1.6 and upstream).
  ToolRun record(const std::vector<std::string>& options, const std::vector<std::string>& command);
  // record, then compare_file.
  Recording record_and_compare(const std::vector<std::string>& options, const std::vector<std::string>& command,
                               const std::set<std::string>& expected);
  // Fetches kGuestTraceDat, checks our report byte-identical to the host
  // trace-cmd's and the file's events equal to `expected`. `tool_output`:
  // what the command printed, shown when the events differ.
  Recording compare_file(const std::string& cmdline, const std::set<std::string>& expected,
                         const std::string& tool_output = "");

  // A new instance name, removed after the test if trace-cmd left it.
  std::string make_instance_name(std::string_view prefix);

 private:
  std::filesystem::path host_dir_;
  int fetched_ = 0;
  std::vector<std::string> made_instances_;
};

}  // namespace tracebed::testlib
