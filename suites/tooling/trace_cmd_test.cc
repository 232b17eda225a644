// trace-cmd (the host's, copied into the guest with its libraries and
// libtraceevent's plugins) driving the guest's tracefs, checked against
// sources that are not trace-cmd's own word for itself:
//   - recordings (record, extract): the trace.dat is fetched to the host;
//     our decoder's report of it must be byte-identical to `trace-cmd report`
//     of the same file, run on the HOST (same trace-cmd build, same plugins),
//     and the events it holds must be exactly those the command line asked
//     for (framework/testing/trace_cmd.h);
//   - start/stop/stat/reset/show/list: what the control layer reads from the
//     kernel's files after (or beside) the command.
// Every failure names the tool, the kernel, the command line and the diff.
#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/agent/protocol.h"
#include "framework/base/text.h"
#include "framework/decode/trace_dat.h"
#include "framework/tracefs/tracefs_text.h"
#include "framework/testing/trace_cmd.h"

namespace tracebed::suites {
namespace {

using decode::TraceDat;
using testlib::kGuestTraceDat;
using testlib::line_diff;

using namespace std::chrono_literals;

std::set<std::string> words_of(std::string_view text) {
  std::set<std::string> out;
  for (auto w : tracefs::split_words(text)) out.emplace(w);
  return out;
}

class TraceCmd : public testlib::TraceCmdTest {
 protected:
  void record_file_version(int v);

  // A recording the tests that only read it share: its command line,
  // trace-cmd's report of it and the file's bytes.
  struct Kept {
    std::string cmdline, report, dat;
  };
  // The marker workload recorded with sched_switch and compared
  // (record_and_compare) by the first test that asks, kept for the others:
  // one trace-cmd record (~3 s under TCG) for all. Empty when that
  // recording failed (the failure is the asking test's; the next retries).
  std::optional<Kept> marker_recording();
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
    "sh", "-c", "echo tracebed-tc-marker > /sys/kernel/tracing/trace_marker; sleep 0.1"};

std::optional<TraceCmd::Kept> TraceCmd::marker_recording() {
  static std::optional<Kept> kept;
  if (kept) return kept;
  auto rec = record_and_compare({"-e", "sched:sched_switch"}, kMarkerWorkload, {"sched:sched_switch", "ftrace:print"});
  if (rec.file.empty() || rec.report.empty() || HasFailure()) return std::nullopt;
  std::ifstream in(rec.file, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  kept = Kept{rec.cmdline, rec.report, bytes.str()};
  return kept;
}

TEST_F(TraceCmd, RecordEventsAndMarkerReportsAsTraceCmd) {
  TRACEBED_REQUIRE(features::sched_events);
  auto rec = marker_recording();
  ASSERT_TRUE(rec || HasFailure()) << "no marker recording";
  if (!rec) return;
  EXPECT_THAT(rec->report, HasSubstr("tracebed-tc-marker")) << where(rec->cmdline);
}

// The same file reported by trace-cmd in the guest and on the host: equal
// only when the guest's trace-cmd has libtraceevent's plugins (sched_switch
// prints "comm:pid [prio] S ==> ..." through its plugin).
TEST_F(TraceCmd, ReportInGuestEqualsReportOnHost) {
  TRACEBED_REQUIRE(features::sched_events);
  auto rec = marker_recording();
  ASSERT_TRUE(rec || HasFailure()) << "no marker recording";
  if (!rec) return;
  // The same bytes in the guest, whichever test recorded them.
  auto wrote = testlib::guest().agent().write_file(std::string(kGuestTraceDat), rec->dat, agent::kWriteCreate, 0644);
  ASSERT_TRUE(wrote && *wrote == 0) << "writing " << kGuestTraceDat << " back to the guest";
  ToolRun guest_report = tool({"report", "-i", std::string(kGuestTraceDat)});
  ASSERT_TRUE(guest_report.ok);
  EXPECT_TRUE(guest_report.out == rec->report)
      << where(guest_report.cmdline) << ": the guest's trace-cmd reports the file differently from the host's\n"
      << line_diff(rec->report, guest_report.out, "trace-cmd report (host)", "trace-cmd report (guest)");
  EXPECT_THAT(rec->report, HasSubstr(" ==> ")) << "no sched_switch line printed by the plugin";
}

// -k (keep): when record ends, trace-cmd restores the files it wrote in
// its own order, set_ftrace_filter emptied before current_tracer goes to
// nop, so the function tracer runs on every function for a moment:
// patching all and unpatching all take ~6 s under TCG. With -k it leaves
// its settings, and the fixture resets them tracer first (one function
// unpatched). What trace-cmd's reset leaves is ResetLeavesTheFixturesCleanState's.
const std::string kKeep = "-k";

TEST_F(TraceCmd, RecordFunctionWithFilter) {
  TRACEBED_REQUIRE(features::function_tracer);
  TRACEBED_REQUIRE(features::dynamic_ftrace);
  REQUIRE_OPEN_FUNCTION();
  auto rec = record_and_compare({kKeep, "-p", "function", "-l", open_function()}, {"cat", "/proc/version"},
                                {"ftrace:function"});
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
  EXPECT_GT(lines, 0) << where(rec.cmdline) << ": no function lines in\n"
                      << rec.report << "\nwhat the kernel kept (-k):\n"
                      << sh("cd /sys/kernel/tracing; for f in current_tracer set_ftrace_filter enabled_functions "
                            "tracing_on; do echo \"== $f\"; cat $f; done; for c in per_cpu/cpu*; do echo \"== $c\"; "
                            "grep -E 'entries|overrun|read events|dropped' $c/stats; done");
}

// Everything the kernel buffered while trace-cmd recorded a short command
// is in the file: per_cpu/cpuN/stats counts no entry left unread. Catches a
// recorder stopped before it read anything (trace-cmd's SIGUSR1 race, which
// record() waits out) and a kernel whose trace_pipe_raw keeps back the
// last, partly filled sub-buffer.
TEST_F(TraceCmd, RecordLeavesNoEventUnread) {
  TRACEBED_REQUIRE(features::sched_events);
  auto rec = record_and_compare({kKeep, "-e", "sched:sched_switch", "-e", "sched:sched_process_exit"}, {"true"},
                                {"sched:sched_switch", "sched:sched_process_exit"});
  ASSERT_FALSE(rec.file.empty());
  auto cpus = top().cpus();
  ASSERT_OK(cpus);
  for (int cpu : *cpus) {
    SCOPED_TRACE(fmt::format("CPU {}", cpu));
    auto stats = top().files().read(fmt::format("per_cpu/cpu{}/stats", cpu));
    ASSERT_OK(stats);
    std::optional<uint64_t> entries;
    for (auto line : tracefs::split_lines(*stats)) {
      if (line.starts_with("entries:")) entries = base::parse_number<uint64_t>(tracefs::trim(line.substr(8)));
    }
    ASSERT_TRUE(entries.has_value()) << "no entries line in per_cpu/cpu" << cpu << "/stats:\n" << *stats;
    EXPECT_EQ(*entries, 0u) << where(rec.cmdline) << ": events left in the kernel's buffer after record; tracing_on "
                            << [&] { auto on = top().files().read("tracing_on"); return on ? *on : on.error().message; }() << ", per_cpu/cpu" << cpu
                            << "/stats:\n" << *stats;
  }
}

TEST_F(TraceCmd, RecordFunctionGraphWithGraphFunction) {
  TRACEBED_REQUIRE(features::function_graph_tracer);
  TRACEBED_REQUIRE(features::set_graph_function);
  REQUIRE_OPEN_FUNCTION();
  // -l keeps the graph to the open path: a few functions to patch under
  // TCG instead of every one. -k skips trace-cmd's own reset, which would
  // patch everything once more.
  std::vector<std::string> options = {kKeep, "-p", "function_graph", "-g", open_function(), "-l", open_function()};
  for (const std::string& f : traceable({"path_openat", "link_path_walk", "do_open", "vfs_open", "do_dentry_open",
                                          "may_open", "alloc_empty_file", "path_init", "complete_walk",
                                          "terminate_walk", "open_last_lookups", "lookup_fast", "walk_component"}))
    options.insert(options.end(), {"-l", f});
  auto rec = record_and_compare(options, {"cat", "/proc/version"}, {"ftrace:funcgraph_entry", "ftrace:funcgraph_exit"});
  EXPECT_THAT(rec.report, HasSubstr(open_function() + "() {")) << where(rec.cmdline);
}

TEST_F(TraceCmd, RecordInstanceWithDashB) {
  TRACEBED_REQUIRE(features::sched_events);
  std::string name = make_instance_name("tc-rec");
  auto rec = record_and_compare({"-B", name, "-e", "sched:sched_switch"}, {"sleep", "0.1"}, {"sched:sched_switch"});
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
  auto rec = record_and_compare({"--file-version", std::to_string(v), "-e", "sched:sched_switch"}, kMarkerWorkload,
                                {"sched:sched_switch", "ftrace:print"});
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
  (void)testlib::guest().sh(fmt::format("rm -f {}*", kGuestTraceDat));
  ToolRun extract = tool({"extract", "-o", std::string(kGuestTraceDat)});
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
