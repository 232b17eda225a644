// trace-cmd (the host's, copied into the guest with its libraries and
// libtraceevent's plugins) driving the guest's tracefs, checked against
// sources that are not trace-cmd's own word for itself:
//   - recordings (record, extract): the trace.dat is fetched to the host;
//     our decoder's report of it must be byte-identical to `trace-cmd report`
//     of the same file, run on the HOST (same trace-cmd build, same plugins),
//     and the events it holds must be exactly those the command line asked for;
//   - start/stop/stat/reset/show/list: what the control layer reads from the
//     kernel's files after (or beside) the command.
// Every failure names the tool, the kernel, the command line and the diff.
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/result.h"
#include "framework/decode/event_format.h"
#include "framework/decode/report.h"
#include "framework/decode/trace_dat.h"
#include "framework/tracefs/text.h"
#include "framework/vm/process.h"
#include "framework/testing/tool_fixture.h"

namespace tracebed::suites {
namespace {

namespace stdfs = std::filesystem;
using decode::EventFormat;
using decode::Record;
using decode::ReportOptions;
using decode::TraceDat;
using decode::write_report;

using namespace std::chrono_literals;

// Where `tracebed_guest_suite(... TOOLS ...)` puts a tool in the guest.
constexpr std::string_view kGuestTraceCmd = "/opt/tracebed/bin/trace-cmd";
constexpr std::string_view kHostTraceCmd = TRACEBED_HOST_TRACE_CMD;
// In the guest's /tmp (tmpfs): trace-cmd writes its per-CPU temporary
// files beside the output.
constexpr std::string_view kGuestDat = "/tmp/tracebed-tc.dat";

// The first differing lines, with a little context: enough to see a column
// or a rounding difference without printing two reports.
std::string line_diff(std::string_view expected, std::string_view actual, std::string_view expected_name,
                      std::string_view actual_name) {
  auto a = tracefs::split_lines(expected);
  auto b = tracefs::split_lines(actual);
  size_t i = 0;
  while (i < a.size() && i < b.size() && a[i] == b[i]) ++i;
  std::string out = fmt::format("--- {} ({} lines, {} bytes)\n+++ {} ({} lines, {} bytes)\n", expected_name,
                                a.size(), expected.size(), actual_name, b.size(), actual.size());
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

std::set<std::string> words_of(std::string_view text) {
  std::set<std::string> out;
  for (auto w : tracefs::split_words(text)) out.emplace(w);
  return out;
}

class TraceCmd : public ToolTest {
 protected:
  void SetUpTest() override {
    if (kHostTraceCmd.empty()) {
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
        host_tool_version(kHostTraceCmd, "trace-cmd version", "trace-cmd (version unknown)");
    use_tool({std::string(kGuestTraceCmd)}, version);
  }

  void TearDown() override {
    // A test that failed half-way may leave the tool's instances behind.
    for (const auto& name : made_instances_) (void)fs().remove_instance(name);
    TracefsTest::TearDown();
  }

  // The guest file on the host (agent file read), in a directory removed
  // with the test.
  stdfs::path fetch(std::string_view guest_path) {
    if (host_dir_.empty()) {
      std::string tmpl = (stdfs::temp_directory_path() / "tracebed-tc-XXXXXX").string();
      if (::mkdtemp(tmpl.data())) host_dir_ = tmpl;
    }
    auto data = testing::guest().agent().read_file(std::string(guest_path), 64u << 20);
    if (!data) {
      ADD_FAILURE() << "reading " << guest_path << " from the guest: " << data.error().message;
      return {};
    }
    stdfs::path out = host_dir_ / fmt::format("{}-{}", ++fetched_, stdfs::path(guest_path).filename().string());
    std::ofstream(out, std::ios::binary) << *data;
    return out;
  }

  ~TraceCmd() override {
    if (!host_dir_.empty()) {
      std::error_code ec;
      stdfs::remove_all(host_dir_, ec);
    }
  }

  // Our decoder's report, as `tracebed report -i file` prints it.
  static Result<std::string> our_report(const stdfs::path& file) {
    TRACEBED_ASSIGN_OR_RETURN(auto dat, TraceDat::open(file.string()));
    char* buf = nullptr;
    size_t len = 0;
    std::FILE* mem = ::open_memstream(&buf, &len);
    if (!mem) return Error{"open_memstream failed"};
    Status st = write_report(*dat, ReportOptions{}, mem);
    std::fclose(mem);
    std::string text(buf, len);
    std::free(buf);
    if (!st) return st.error();
    return text;
  }

  // The oracle: `trace-cmd report -i file` on the host; stdout only (it
  // warns on stderr, e.g. about formats it cannot parse).
  Result<std::string> host_report(const stdfs::path& file) {
    stdfs::path out = file.string() + ".report", err = file.string() + ".stderr";
    std::string script = fmt::format("{} report -i {} >{} 2>{}", shell_word(kHostTraceCmd),
                                     shell_word(file.string()), shell_word(out.string()),
                                     shell_word(err.string()));
    TRACEBED_ASSIGN_OR_RETURN(auto r, vm::run_process({"sh", "-c", script}, 300s));
    std::ifstream in(out, std::ios::binary), ein(err);
    std::stringstream ss, es;
    ss << in.rdbuf();
    es << ein.rdbuf();
    if (r.status != 0) return Error{fmt::format("trace-cmd report on the host: status {}: {}", r.status, es.str())};
    return ss.str();
  }

  // The events (system:name) in every buffer of the file, decoded by us.
  static Result<std::set<std::string>> event_names(const stdfs::path& file) {
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

  // Records with `record_args` in the guest, fetches the file and checks
  // our report against trace-cmd's and the events against `expected`.
  // Returns the command line, the host copy and trace-cmd's report text.
  struct Recording {
    std::string cmdline;
    stdfs::path file;
    std::string report;
  };
  Recording record_and_compare(std::vector<std::string> record_args, const std::set<std::string>& expected) {
    (void)testing::guest().sh(fmt::format("rm -f {}*", kGuestDat));
    std::vector<std::string> args = {"record", "-o", std::string(kGuestDat)};
    args.insert(args.end(), record_args.begin(), record_args.end());
    ToolRun ran = tool(args);
    if (!ran.ok) {
      Recording failed;
      failed.cmdline = ran.cmdline;
      return failed;
    }
    return compare_file(ran.cmdline, expected, ran.out + ran.err);
  }

  // `tool_output`: what the command printed, shown when the events differ.
  Recording compare_file(const std::string& cmdline, const std::set<std::string>& expected,
                         const std::string& tool_output = "") {
    Recording rec;
    rec.cmdline = cmdline;
    rec.file = fetch(kGuestDat);
    if (rec.file.empty()) return rec;
    auto theirs = host_report(rec.file);
    if (!theirs) {
      ADD_FAILURE() << where(cmdline) << ": " << theirs.error().message;
      return rec;
    }
    rec.report = *theirs;
    auto ours = our_report(rec.file);
    if (!ours) {
      ADD_FAILURE() << where(cmdline) << ": tracebed report failed where trace-cmd report did not: "
                    << ours.error().message;
      return rec;
    }
    EXPECT_TRUE(*ours == *theirs) << where(cmdline)
                                  << ": tracebed report differs from trace-cmd report (run on the host)\n"
                                  << line_diff(*theirs, *ours, "trace-cmd report", "tracebed report");
    auto names = event_names(rec.file);
    if (!names) {
      ADD_FAILURE() << where(cmdline) << ": decoding the events: " << names.error().message;
      return rec;
    }
    EXPECT_EQ(*names, expected) << where(cmdline) << ": the file's events are not those asked for\n"
                                << set_diff(expected, *names) << "\n" << cmdline << " printed:\n" << tool_output;
    return rec;
  }

  std::string make_instance_name(std::string_view prefix) {
    std::string n = tracefs::unique_instance_name(prefix);
    made_instances_.push_back(n);
    return n;
  }

  void record_file_version(int v);

  stdfs::path host_dir_;
  int fetched_ = 0;
  std::vector<std::string> made_instances_;
};

// The function the function tracers are limited to: every open reaches it
// (busybox cat reads with sendfile, so not vfs_read), and being called
// from another file (fs/open.c -> fs/namei.c) it is never inlined away.
// 7.3 renamed do_filp_open to do_file_open: take whichever this kernel's
// available_filter_functions lists. An unknown name is no harmless choice:
// `trace-cmd record/start -p function -l NAME` exit 0 and trace every
// function when the kernel rejects the filter.
const std::string& open_function() {
  static const std::string name = [] {
    auto fns = TracefsTest::fs().available_filter_functions();
    if (!fns) return std::string();
    for (const char* want : {"do_filp_open", "do_file_open"}) {
      if (std::find(fns->begin(), fns->end(), want) != fns->end()) return std::string(want);
    }
    return std::string();
  }();
  return name;
}

#define REQUIRE_OPEN_FUNCTION()                                                         \
  do {                                                                                  \
    if (open_function().empty()) {                                                      \
      GTEST_SKIP() << "needs do_filp_open or do_file_open in available_filter_functions"; \
    }                                                                                   \
  } while (0)

// A workload that writes a marker and sleeps: sched_switch from the sleep,
// ftrace:print from the marker (always recorded, no event to enable).
const std::vector<std::string> kMarkerWorkload = {
    "sh", "-c", "echo tracebed-tc-marker > /sys/kernel/tracing/trace_marker; sleep 1"};

TEST_F(TraceCmd, RecordEventsAndMarkerReportsAsTraceCmd) {
  TRACEBED_REQUIRE(features::sched_events);
  std::vector<std::string> args = {"-e", "sched:sched_switch"};
  args.insert(args.end(), kMarkerWorkload.begin(), kMarkerWorkload.end());
  auto rec = record_and_compare(args, {"sched:sched_switch", "ftrace:print"});
  EXPECT_THAT(rec.report, HasSubstr("tracebed-tc-marker")) << where(rec.cmdline);
}

// The same file reported by trace-cmd in the guest and on the host: equal
// only when the guest's trace-cmd has libtraceevent's plugins (sched_switch
// prints "comm:pid [prio] S ==> ..." through its plugin).
TEST_F(TraceCmd, ReportInGuestEqualsReportOnHost) {
  TRACEBED_REQUIRE(features::sched_events);
  std::vector<std::string> args = {"-e", "sched:sched_switch"};
  args.insert(args.end(), kMarkerWorkload.begin(), kMarkerWorkload.end());
  auto rec = record_and_compare(args, {"sched:sched_switch", "ftrace:print"});
  if (rec.file.empty()) return;
  ToolRun guest_report = tool({"report", "-i", std::string(kGuestDat)});
  ASSERT_TRUE(guest_report.ok);
  EXPECT_TRUE(guest_report.out == rec.report)
      << where(guest_report.cmdline) << ": the guest's trace-cmd reports the file differently from the host's\n"
      << line_diff(rec.report, guest_report.out, "trace-cmd report (host)", "trace-cmd report (guest)");
  EXPECT_THAT(rec.report, HasSubstr(" ==> ")) << "no sched_switch line printed by the plugin";
}

TEST_F(TraceCmd, RecordFunctionWithFilter) {
  TRACEBED_REQUIRE(features::function_tracer);
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  REQUIRE_OPEN_FUNCTION();
  std::vector<std::string> args = {"-p", "function", "-l", open_function(), "cat", "/proc/version"};
  auto rec = record_and_compare(args, {"ftrace:function"});
  // Every function line is the filtered function (trace-cmd's own text).
  int lines = 0;
  std::vector<std::string_view> outside;
  for (auto line : tracefs::split_lines(rec.report)) {
    size_t at = line.find(" function: ");
    if (at == std::string_view::npos) continue;
    ++lines;
    std::string_view fn = tracefs::trim(line.substr(at + 11));
    if (!fn.starts_with(open_function() + " ") && fn != open_function()) outside.push_back(line);
  }
  EXPECT_TRUE(outside.empty()) << where(rec.cmdline) << ": " << outside.size() << " of "
                                  << lines << " function lines are outside the filter, the first:\n"
                                  << fmt::format("{}", fmt::join(outside.begin(),
                                                                 outside.begin() + std::min<size_t>(outside.size(), 5),
                                                                 "\n"));
  EXPECT_GT(lines, 0) << where(rec.cmdline) << ": no function lines in\n" << rec.report;
}

TEST_F(TraceCmd, RecordFunctionGraphWithGraphFunction) {
  TRACEBED_REQUIRE(features::function_graph_tracer);
  TRACEBED_REQUIRE(features::set_graph_function);
  REQUIRE_OPEN_FUNCTION();
  std::vector<std::string> args = {"-p", "function_graph", "-g", open_function(), "cat", "/proc/version"};
  auto rec = record_and_compare(args, {"ftrace:funcgraph_entry", "ftrace:funcgraph_exit"});
  EXPECT_THAT(rec.report, HasSubstr(open_function() + "() {")) << where(rec.cmdline);
}

TEST_F(TraceCmd, RecordInstanceWithDashB) {
  TRACEBED_REQUIRE(features::sched_events);
  std::string name = make_instance_name("tc-rec");
  std::vector<std::string> args = {"-B", name, "-e", "sched:sched_switch", "sleep", "1"};
  auto rec = record_and_compare(args, {"sched:sched_switch"});
  if (rec.file.empty()) return;
  auto dat = TraceDat::open(rec.file.string());
  ASSERT_OK(dat);
  std::vector<std::string> buffers;
  for (const auto& b : (*dat)->buffers()) buffers.push_back(b.name);
  EXPECT_THAT(buffers, Contains(name)) << where(rec.cmdline);
  // trace-cmd made the instance and removes it when done.
  auto names = fs().instance_names();
  ASSERT_OK(names);
  EXPECT_THAT(*names, Not(Contains(name))) << where(rec.cmdline)
                                           << ": the instance it made is still there";
}

// --file-version 6 and 7 (trace-cmd.dat.v6 / v7 specs): the header's
// version string, and the same report checks.
void TraceCmd::record_file_version(int v) {
  std::vector<std::string> args = {"--file-version", std::to_string(v), "-e", "sched:sched_switch"};
  args.insert(args.end(), kMarkerWorkload.begin(), kMarkerWorkload.end());
  auto rec = record_and_compare(args, {"sched:sched_switch", "ftrace:print"});
  if (rec.file.empty()) return;
  // magic (3 bytes), "tracing", then the version as a string.
  std::ifstream in(rec.file, std::ios::binary);
  std::string head(16, '\0');
  in.read(head.data(), head.size());
  EXPECT_EQ(head.substr(10, 2), (std::string{static_cast<char>('0' + v), '\0'}))
      << where(rec.cmdline);
  auto dat = TraceDat::open(rec.file.string());
  ASSERT_OK(dat);
  EXPECT_EQ((*dat)->version(), v) << where(rec.cmdline);
  ::testing::Test::RecordProperty("compression", (*dat)->compression());
}

TEST_F(TraceCmd, RecordFileVersion6) {
  TRACEBED_REQUIRE(features::sched_events);
  record_file_version(6);
}

TEST_F(TraceCmd, RecordFileVersion7) {
  TRACEBED_REQUIRE(features::sched_events);
  record_file_version(7);
}

TEST_F(TraceCmd, StartStopExtract) {
  TRACEBED_REQUIRE(features::function_tracer);
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  TRACEBED_REQUIRE(features::sched_events);
  REQUIRE_OPEN_FUNCTION();
  ToolRun start = tool({"start", "-p", "function", "-l", open_function(), "-e", "sched:sched_switch"});
  ASSERT_TRUE(start.ok);
  {
    SCOPED_TRACE(where(start.cmdline));
    auto tracer = top().current_tracer();
    ASSERT_OK(tracer);
    EXPECT_EQ(*tracer, "function");
    auto filter = top().ftrace_filter();
    ASSERT_OK(filter);
    EXPECT_EQ(filter->functions, std::vector<std::string>{open_function()});
    auto enabled = top().set_event();
    ASSERT_OK(enabled);
    std::vector<std::string> names;
    for (const auto& e : *enabled) names.push_back(e.str());
    EXPECT_EQ(names, std::vector<std::string>{"sched:sched_switch"});
    auto on = top().tracing_on();
    ASSERT_OK(on);
    EXPECT_TRUE(*on);
  }
  run({"cat", "/proc/version"});
  ToolRun stop = tool({"stop"});
  ASSERT_TRUE(stop.ok);
  {
    auto on = top().tracing_on();
    ASSERT_OK(on);
    EXPECT_FALSE(*on) << where(stop.cmdline);
  }
  (void)testing::guest().sh(fmt::format("rm -f {}*", kGuestDat));
  ToolRun extract = tool({"extract", "-o", std::string(kGuestDat)});
  ASSERT_TRUE(extract.ok);
  compare_file(extract.cmdline, {"ftrace:function", "sched:sched_switch"}, extract.out + extract.err);
}

TEST_F(TraceCmd, ShowEqualsTraceFile) {
  for (int i = 0; i < 3; ++i) ASSERT_OK(inst().write_marker(fmt::format("tracebed-tc-show {}", i)));
  ASSERT_OK(inst().set_tracing_on(false));  // a fixed window for both reads
  ToolRun show = tool({"show", "-B", inst().name()});
  ASSERT_TRUE(show.ok);
  auto trace = inst().read_trace();
  ASSERT_OK(trace);
  EXPECT_TRUE(show.out == *trace) << where(show.cmdline) << ": differs from the control layer's read of "
                                  << inst().path("trace") << "\n"
                                  << line_diff(*trace, show.out, "trace (control layer)", "trace-cmd show");
  EXPECT_THAT(show.out, HasSubstr("tracebed-tc-show 2"));
}

TEST_F(TraceCmd, StatAgreesWithControlLayer) {
  TRACEBED_REQUIRE(features::sched_events);
  Instance& in = inst();
  ASSERT_OK(in.set_tracing_on(false));
  ASSERT_OK(in.event("sched", "sched_switch").enable());
  ASSERT_OK(in.event("sched", "sched_wakeup").enable());
  // The kernel rounds the size to whole sub-buffers: stat must show its
  // figure, not ours.
  ASSERT_OK(in.set_buffer_size_kb(1024));
  bool with_function = false;
  auto tracers = in.available_tracers();
  ASSERT_OK(tracers);
  bool has_function = std::find(tracers->begin(), tracers->end(), "function") != tracers->end();
  if (has_function && in.files().has("set_ftrace_filter") && !open_function().empty()) {
    std::vector<std::string> f = {open_function()};
    ASSERT_OK(in.set_ftrace_filter(f));
    ASSERT_OK(in.set_tracer("function"));
    with_function = true;
  }
  ToolRun stat = tool({"stat", "-B", in.name()});
  ASSERT_TRUE(stat.ok);
  SCOPED_TRACE(where(stat.cmdline) + "\n" + stat.out);

  // Parse the sections trace-cmd 3.1.6's trace-stat.c prints.
  std::string tracer = "nop";  // "Tracer: " is printed only when not nop
  std::set<std::string> events, functions;
  std::string per_cpu_kb, total_kb, system, section;
  bool tracing_disabled = false, tracing_enabled = false;
  for (auto raw : tracefs::split_lines(stat.out)) {
    std::string_view line = raw;
    std::string_view t = tracefs::trim(line);
    if (line.starts_with("Tracer: ")) {
      tracer = std::string(tracefs::trim(line.substr(8)));
      section.clear();
      continue;
    }
    if (t == "Tracing is disabled") tracing_disabled = true;
    if (t == "Tracing is enabled") tracing_enabled = true;
    if (!line.empty() && line[0] != ' ') { section = std::string(t); continue; }
    if (t.empty()) continue;
    if (section == "Events:") {
      if (line.starts_with("        ")) events.insert(system + ":" + std::string(t));
      else if (line.starts_with("    ")) system = std::string(t);
    } else if (section == "Function Filter:") {
      functions.insert(std::string(t));
    } else if (section == "Buffer size in kilobytes (per cpu):") {
      per_cpu_kb = std::string(t);
    } else if (section == "Buffer total size in kilobytes:") {
      total_kb = std::string(t);
    }
  }

  auto cur = in.current_tracer();
  ASSERT_OK(cur);
  EXPECT_EQ(tracer, *cur);
  if (with_function) {
    EXPECT_EQ(tracer, "function");
  }
  auto enabled = in.set_event();
  ASSERT_OK(enabled);
  std::set<std::string> want;
  for (const auto& e : *enabled) want.insert(e.str());
  EXPECT_EQ(events, want) << set_diff(want, events);
  EXPECT_EQ(want, (std::set<std::string>{"sched:sched_switch", "sched:sched_wakeup"}));
  auto size = in.buffer_size();
  ASSERT_OK(size);
  ASSERT_TRUE(size->kb.has_value());
  EXPECT_EQ(per_cpu_kb, std::to_string(*size->kb));
  EXPECT_GE(*size->kb, 1024u);
  auto total = in.buffer_total_size_kb();
  if (total) {
    EXPECT_EQ(total_kb, std::to_string(*total));
  }
  if (with_function) {
    auto filter = in.ftrace_filter();
    ASSERT_OK(filter);
    EXPECT_EQ(functions, std::set<std::string>(filter->functions.begin(), filter->functions.end()));
  }
  auto on = in.tracing_on();
  ASSERT_OK(on);
  EXPECT_EQ(tracing_disabled, !*on);
  EXPECT_EQ(tracing_enabled, *on);
}

TEST_F(TraceCmd, ResetLeavesTheFixturesCleanState) {
  TRACEBED_REQUIRE(features::function_tracer);
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  TRACEBED_REQUIRE(features::sched_events);
  REQUIRE_OPEN_FUNCTION();
  std::string name = make_instance_name("tc-reset");
  ToolRun start = tool({"start", "-p", "function", "-l", open_function(), "-e", "sched:sched_wakeup", "-B", name, "-e",
                  "sched:sched_switch"});
  ASSERT_TRUE(start.ok);
  {
    SCOPED_TRACE(where(start.cmdline));
    auto names = fs().instance_names();
    ASSERT_OK(names);
    ASSERT_THAT(*names, Contains(name));
    auto made = fs().open_instance(name);
    ASSERT_OK(made);
    auto on = made->event("sched", "sched_switch").enabled();
    ASSERT_OK(on);
    EXPECT_TRUE(*on);
    made->release();
  }
  ASSERT_OK(top().set_tracing_on(false));  // reset must turn it back on
  // -t: the top level too (with -B only the named instance is reset);
  // -d: delete the instance named by the preceding -B.
  ToolRun reset = tool({"reset", "-t", "-B", name, "-d"});
  ASSERT_TRUE(reset.ok);
  SCOPED_TRACE(where(reset.cmdline));
  // What the fixture's reset (ftracetest's initialize_system) leaves.
  auto on = top().tracing_on();
  ASSERT_OK(on);
  EXPECT_TRUE(*on) << "tracing_on";
  auto tracer = top().current_tracer();
  ASSERT_OK(tracer);
  EXPECT_EQ(*tracer, "nop");
  auto enabled = top().set_event();
  ASSERT_OK(enabled);
  std::vector<std::string> names;
  for (const auto& e : *enabled) names.push_back(e.str());
  EXPECT_THAT(names, IsEmpty()) << "events still enabled";
  auto all = top().files().read("events/enable");
  ASSERT_OK(all);
  EXPECT_EQ(tracefs::trim(*all), "0") << "events/enable";
  auto filter = top().ftrace_filter();
  ASSERT_OK(filter);
  EXPECT_THAT(filter->functions, IsEmpty()) << "set_ftrace_filter";
  auto instances = fs().instance_names();
  ASSERT_OK(instances);
  EXPECT_THAT(*instances, Not(Contains(name))) << "the instance trace-cmd start made";
}

// `list -e/-t/-o` against available_events, available_tracers and
// trace_options as the control layer reads them.
TEST_F(TraceCmd, ListEventsEqualsAvailableEvents) {
  ToolRun list = tool({"list", "-e"});
  ASSERT_TRUE(list.ok);
  auto avail = fs().available_events();
  ASSERT_OK(avail);
  std::set<std::string> want, got;
  for (const auto& e : *avail) want.insert(e.str());
  for (auto line : tracefs::split_lines(list.out))
    if (!tracefs::trim(line).empty()) got.emplace(tracefs::trim(line));
  EXPECT_EQ(got, want) << where(list.cmdline) << ": differs from available_events\n" << set_diff(want, got);
}

TEST_F(TraceCmd, ListTracersEqualsAvailableTracers) {
  ToolRun list = tool({"list", "-t"});
  ASSERT_TRUE(list.ok);
  auto avail = top().available_tracers();
  ASSERT_OK(avail);
  std::set<std::string> want(avail->begin(), avail->end());
  std::set<std::string> got = words_of(list.out);
  EXPECT_EQ(got, want) << where(list.cmdline) << ": differs from available_tracers\n" << set_diff(want, got);
}

// `list -o` lists the options/ directory, which holds every tracer's
// options (funcgraph-*, func_stack_trace, ...), not trace_options, which
// shows only the current tracer's: compare with the directory's files.
TEST_F(TraceCmd, ListOptionsEqualsOptionsDirectory) {
  ToolRun list = tool({"list", "-o"});
  ASSERT_TRUE(list.ok);
  auto files = top().files().ops().list(top().path("options"));
  ASSERT_OK(files);
  std::set<std::string> want;
  for (const auto& name : *files) {
    auto on = top().option(name);
    ASSERT_OK(on);
    want.insert(*on ? name : "no" + name);
  }
  std::set<std::string> got = words_of(list.out);
  EXPECT_EQ(got, want) << where(list.cmdline) << ": differs from the files in " << top().path("options") << "\n"
                       << set_diff(want, got);
  // Those trace_options shows are among them, with the same values.
  auto opts = top().options();
  ASSERT_OK(opts);
  for (const auto& [name, on] : *opts) EXPECT_THAT(got, Contains(on ? name : "no" + name)) << where(list.cmdline);
}

}  // namespace
}  // namespace tracebed::suites
