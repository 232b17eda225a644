// `tracebed report`: prints a trace.dat the way `trace-cmd report` does.
#include "framework/cli/commands.h"

#include <cstdio>
#include <sstream>

#include <fmt/format.h>

#include "framework/decode/report.h"
#include "framework/decode/report_views.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::cli {
namespace {

using decode::ReportOptions;
using decode::TraceDat;
using decode::write_event_list;
using decode::write_first_last_events;
using decode::write_report;

// "0,2-3" -> {0, 2, 3}
Result<std::set<int>> parse_cpu_list(const std::string& text) {
  std::set<int> cpus;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int lo = 0, hi = 0;
    char dash = 0;
    std::stringstream part(item);
    if (!(part >> lo)) return Error{fmt::format("bad CPU list '{}'", text)};
    hi = lo;
    if (part >> dash) {
      if (dash != '-' || !(part >> hi) || hi < lo) return Error{fmt::format("bad CPU list '{}'", text)};
    }
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return cpus;
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "print a trace.dat like `trace-cmd report`");
  struct Args {
    std::string input = "trace.dat", file;
    bool raw_ts = false, raw_fields = false;
    bool no_hardirqs = false, no_softirqs = false;
    bool quiet = false, list_events = false, first_event = false, last_event = false;
    std::string cpus;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("file", args->file, "trace.dat to read, as `trace-cmd report FILE` (or -i)");
  cmd->add_option("-i,--input", args->input, "trace.dat to read")->capture_default_str();
  cmd->add_flag("-t", args->raw_ts, "print full nanosecond time stamps");
  cmd->add_flag("-R", args->raw_fields, "print raw fields instead of the print format");
  cmd->add_option("--cpu", args->cpus, "only these CPUs (e.g. 0,2-3)");
  cmd->add_flag("-I", args->no_hardirqs, "leave out events with the HARDIRQ flag set");
  cmd->add_flag("-S", args->no_softirqs, "leave out events with the SOFTIRQ flag set");
  // trace-cmd's -q silences its library's warnings, which go to stderr;
  // its stdout is the same with or without it.
  cmd->add_flag("-q", args->quiet, "no warnings (accepted; the text is the same)");
  cmd->add_flag("-E", args->list_events, "list the events stored, system:name");
  cmd->add_flag("--first-event", args->first_event, "the first time stamp of each CPU");
  cmd->add_flag("--last-event", args->last_event, "the last time stamp of each CPU");
  cmd->final_callback([args] {
    if (!args->file.empty()) {
      if (args->input != "trace.dat" && args->input != args->file)
        usage_error(fmt::format("two input files: {} and -i {}", args->file, args->input));
      args->input = args->file;
    }
    ReportOptions options;
    options.raw_timestamps = args->raw_ts;
    options.raw_fields = args->raw_fields;
    options.no_hardirqs = args->no_hardirqs;
    options.no_softirqs = args->no_softirqs;
    if (!args->cpus.empty()) {
      auto cpus = parse_cpu_list(args->cpus);
      if (!cpus) usage_error(cpus.error().message);
      options.cpus = *cpus;
    }
    auto file = TraceDat::open(args->input);
    if (!file) fail(file.error().message);
    Status st;
    if (args->list_events)
      st = write_event_list(**file, stdout);
    else if (args->first_event || args->last_event)
      st = write_first_last_events(**file, args->input, args->first_event, args->last_event, stdout);
    else
      st = write_report(**file, options, stdout);
    std::fflush(stdout);
    if (!st) fail(st.error().message);
  });
}

}  // namespace tracebed::cli
