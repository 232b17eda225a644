#include "framework/testing/trace_cmd.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "framework/decode/event_format.h"
#include "framework/decode/report.h"
#include "framework/decode/trace_dat.h"
#include "framework/testing/assert_ok.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::testlib {

namespace stdfs = std::filesystem;
using decode::EventFormat;
using decode::Record;
using decode::ReportOptions;
using decode::TraceDat;

std::string_view host_trace_cmd() { return TRACEBED_HOST_TRACE_CMD; }

std::string line_diff(std::string_view expected, std::string_view actual, std::string_view expected_name,
                      std::string_view actual_name) {
  auto a = tracefs::split_lines(expected);
  auto b = tracefs::split_lines(actual);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string out = fmt::format("--- {} ({} lines, {} bytes)\n+++ {} ({} lines, {} bytes)\n", expected_name, a.size(),
                                expected.size(), actual_name, b.size(), actual.size());
  if (i == a.size() && i == b.size()) return out + "(lines equal; the texts differ in the final newline)\n";
  out += fmt::format("first difference at line {}:\n", i + 1);
  size_t from = i >= 2 ? i - 2 : 0;
  for (size_t k = from; k < i; ++k) out += fmt::format("  {}\n", a[k]);
  int shown = 0;
  for (size_t k = i; k < a.size() && shown < 6; ++k, ++shown) out += fmt::format("- {}\n", a[k]);
  shown = 0;
  for (size_t k = i; k < b.size() && shown < 6; ++k, ++shown) out += fmt::format("+ {}\n", b[k]);
  return out;
}

Result<std::string> tracebed_report(const stdfs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(auto dat, TraceDat::open(file.string()));
  char* buf = nullptr;
  size_t len = 0;
  std::FILE* mem = ::open_memstream(&buf, &len);
  if (!mem) return Error{"open_memstream failed"};
  Status st = decode::write_report(*dat, ReportOptions{}, mem);
  std::fclose(mem);
  std::string text(buf, len);
  std::free(buf);
  if (!st) return st.error();
  return text;
}

Result<std::string> host_trace_cmd_report(const stdfs::path& file) {
  stdfs::path out = file.string() + ".report", err = file.string() + ".stderr";
  std::string script = fmt::format("{} report -i {} >{} 2>{}", shell_word(host_trace_cmd()), shell_word(file.string()),
                                   shell_word(out.string()), shell_word(err.string()));
  TRACEBED_ASSIGN_OR_RETURN(auto r, vm::run_process({"sh", "-c", script}, std::chrono::seconds(300)));
  std::ifstream in(out, std::ios::binary), ein(err);
  std::stringstream ss, es;
  ss << in.rdbuf();
  es << ein.rdbuf();
  if (r.status != 0) return Error{fmt::format("trace-cmd report on the host: status {}: {}", r.status, es.str())};
  return ss.str();
}

Result<std::set<std::string>> trace_dat_event_names(const stdfs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(auto dat, TraceDat::open(file.string()));
  TRACEBED_ASSIGN_OR_RETURN(auto stream, dat->events());
  std::set<std::string> names;
  Record rec;
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(bool more, stream->next(rec));
    if (!more) break;
    const EventFormat* f = dat->context().event_of(rec.data);
    names.insert(f ? f->system + ":" + f->name : "(unknown id)");
  }
  return names;
}

TraceCmdTest::~TraceCmdTest() {
  if (!host_dir_.empty()) {
    std::error_code ec;
    stdfs::remove_all(host_dir_, ec);
  }
}

void TraceCmdTest::SetUpTest() {
  if (host_trace_cmd().empty()) {
    GTEST_SKIP() << "needs trace-cmd: there was none on the host when the suite was configured";
  }
  // Expand the top-level buffer before the fixture saves its sizes: an
  // unexpanded buffer's per-CPU files read "7" (only the top file adds
  // "(expanded: 1408)"), so the saved size would be 7 KB, written back
  // after trace-cmd expanded the buffer; in 7 KB per CPU trace-cmd
  // record then records 0 bytes.
  if (auto b = fs().top().buffer_size(); b && b->expanded_kb) {
    ASSERT_OK(fs().top().set_buffer_size_kb(*b->expanded_kb));
  }
  // trace-cmd works on the top level unless given -B: the fixture saves
  // its knobs now and resets it (ftracetest's list) after the test.
  top();
  static const std::string version =
      host_tool_version(host_trace_cmd(), "trace-cmd version", "trace-cmd (version unknown)");
  use_tool({std::string(kGuestTraceCmd)}, version);
}

void TraceCmdTest::TearDown() {
  // A test that failed half-way may leave the tool's instances behind.
  for (const auto& name : made_instances_) (void)fs().remove_instance(name);
  ToolTest::TearDown();
}

stdfs::path TraceCmdTest::fetch(std::string_view guest_path) {
  if (host_dir_.empty()) {
    std::string tmpl = (stdfs::temp_directory_path() / "tracebed-tc-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) host_dir_ = tmpl;
  }
  auto data = guest().agent().read_file(std::string(guest_path), 64u << 20);
  if (!data) {
    ADD_FAILURE() << "reading " << guest_path << " from the guest: " << data.error().message;
    return {};
  }
  stdfs::path out = host_dir_ / fmt::format("{}-{}", ++fetched_, stdfs::path(guest_path).filename().string());
  std::ofstream(out, std::ios::binary) << *data;
  return out;
}

namespace {
// Waits (up to 20 s) until as many trace_pipe_raw files are open as there
// are CPUs, and a moment more for the recorders to reach their loop.
constexpr std::string_view kAfterRecorders =
    "n=$(grep -c ^processor /proc/cpuinfo); i=0; "
    "while [ \"$(ls -l /proc/[0-9]*/fd 2>/dev/null | grep -c trace_pipe_raw)\" -lt \"$n\" ] && [ $i -lt 200 ]; "
    "do sleep 0.1; i=$((i+1)); done; sleep 0.2; exec \"$@\"";
}  // namespace

ToolRun TraceCmdTest::record(const std::vector<std::string>& options, const std::vector<std::string>& command) {
  (void)guest().sh(fmt::format("rm -f {}*", kGuestTraceDat));
  std::vector<std::string> args = {"record", "-o", std::string(kGuestTraceDat)};
  args.insert(args.end(), options.begin(), options.end());
  args.insert(args.end(), {"sh", "-c", std::string(kAfterRecorders), "sh"});
  args.insert(args.end(), command.begin(), command.end());
  return tool(args);
}

TraceCmdTest::Recording TraceCmdTest::record_and_compare(const std::vector<std::string>& options,
                                                         const std::vector<std::string>& command,
                                                         const std::set<std::string>& expected) {
  ToolRun ran = record(options, command);
  if (!ran.ok) {
    Recording failed;
    failed.cmdline = ran.cmdline;
    return failed;
  }
  return compare_file(ran.cmdline, expected, ran.out + ran.err);
}

TraceCmdTest::Recording TraceCmdTest::compare_file(const std::string& cmdline, const std::set<std::string>& expected,
                                                   const std::string& tool_output) {
  Recording rec;
  rec.cmdline = cmdline;
  rec.file = fetch(kGuestTraceDat);
  if (rec.file.empty()) return rec;
  auto theirs = host_trace_cmd_report(rec.file);
  if (!theirs) {
    ADD_FAILURE() << where(cmdline) << ": " << theirs.error().message;
    return rec;
  }
  rec.report = *theirs;
  auto ours = tracebed_report(rec.file);
  if (!ours) {
    ADD_FAILURE() << where(cmdline)
                  << ": tracebed report failed where trace-cmd report did not: " << ours.error().message;
    return rec;
  }
  rec.our_report = *ours;
  EXPECT_TRUE(*ours == *theirs) << where(cmdline)
                                << ": tracebed report differs from trace-cmd report (run on the host)\n"
                                << line_diff(*theirs, *ours, "trace-cmd report", "tracebed report");
  auto names = trace_dat_event_names(rec.file);
  if (!names) {
    ADD_FAILURE() << where(cmdline) << ": decoding the events: " << names.error().message;
    return rec;
  }
  EXPECT_EQ(*names, expected) << where(cmdline) << ": the file's events are not those asked for\n"
                              << set_diff(expected, *names) << "\n"
                              << cmdline << " printed:\n"
                              << tool_output;
  return rec;
}

std::string TraceCmdTest::make_instance_name(std::string_view prefix) {
  std::string n = tracefs::unique_instance_name(prefix);
  made_instances_.push_back(n);
  return n;
}

}  // namespace tracebed::testlib
