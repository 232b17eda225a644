// `tracebed report`: prints a trace.dat the way `trace-cmd report` does.
#include "framework/cli/commands.h"

#include <charconv>
#include <cstdio>
#include <map>
#include <optional>
#include <sstream>

#include <fmt/format.h>

#include "framework/decode/record_filter.h"
#include "framework/decode/report.h"
#include "framework/decode/report_views.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::cli {
namespace {

using decode::ReportOptions;
using decode::TraceDat;
using decode::write_cpu_list;
using decode::write_event_list;
using decode::write_report;

// The largest CPU number a kernel can have (NR_CPUS is at most 8192,
// arch/x86/Kconfig): a bound, so "0-2000000000" is refused, not expanded.
constexpr int kMaxCpu = 8191;

// "0,2-3" -> {0, 2, 3}
Result<std::set<int>> parse_cpu_list(const std::string& text) {
  std::set<int> cpus;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    int lo = 0, hi = 0;
    char dash = 0;
    std::stringstream part(item);
    if (!(part >> lo) || lo < 0) return Error{fmt::format("bad CPU list '{}': '{}' is not a CPU number", text, item)};
    hi = lo;
    if (part >> dash) {
      if (dash != '-' || !(part >> hi) || hi < lo || part >> dash)
        return Error{fmt::format("bad CPU list '{}': '{}' is not N or N-M with N <= M", text, item)};
    }
    if (hi > kMaxCpu)
      return Error{fmt::format("bad CPU list '{}': CPU {} is beyond {}, the largest a kernel can have", text, hi,
                               kMaxCpu)};
    for (int c = lo; c <= hi; ++c) cpus.insert(c);
  }
  return cpus;
}

// -F filters in command-line order, each after -v or not (trace-cmd's -v
// inverts the filters that follow it).
Result<std::vector<decode::RecordFilter::Spec>> filter_specs(CLI::App& cmd) {
  std::vector<decode::RecordFilter::Spec> specs;
  bool inverted = false;
  std::map<const CLI::Option*, size_t> used;
  for (const CLI::Option* opt : cmd.parse_order()) {
    if (opt->check_name("-v")) {
      if (inverted) return Error{"only one -v can be used"};
      inverted = true;
    } else if (opt->check_name("-F")) {
      const auto& values = opt->results();
      const size_t i = used[opt]++;
      if (i < values.size()) specs.push_back({values[i], inverted});
    }
  }
  return specs;
}

struct ReportArgs {
  std::string input = "trace.dat", file;
  bool raw_ts = false, raw_fields = false;
  bool no_hardirqs = false, no_softirqs = false;
  bool quiet = false, list_events = false, cpu_list = false, first_event = false, last_event = false;
  bool formats = false, functions = false, printk = false, stat = false;
  bool latency = false, ts_diff = false, wakeup = false, invert = false;
  std::vector<std::string> filters;
  std::optional<uint64_t> ts2secs;
  std::optional<int64_t> ts_offset;
  std::string cpus;
};

void add_report_options(CLI::App* cmd, ReportArgs& a) {
  cmd->add_option("file", a.file, "trace.dat to read, as `trace-cmd report FILE` (or -i)");
  cmd->add_option("-i,--input", a.input, "trace.dat to read")->capture_default_str();
  cmd->add_flag("-t", a.raw_ts, "print full nanosecond time stamps");
  cmd->add_flag("-R", a.raw_fields, "print raw fields instead of the print format");
  cmd->add_option("--cpu", a.cpus, "only these CPUs (e.g. 0,2-3)");
  cmd->add_flag("-I", a.no_hardirqs, "leave out events with the HARDIRQ flag set");
  cmd->add_flag("-S", a.no_softirqs, "leave out events with the SOFTIRQ flag set");
  // trace-cmd's -q silences its library's warnings, which go to stderr;
  // its stdout is the same with or without it.
  cmd->add_flag("-q", a.quiet, "no warnings (accepted; the text is the same)");
  cmd->add_flag("-E", a.list_events, "list the events stored, system:name");
  cmd->add_flag("--events", a.formats, "print the event formats stored (a v6 file's; nothing for v7, as trace-cmd)");
  cmd->add_flag("-f", a.functions, "list the kernel functions stored (kallsyms), by address");
  cmd->add_flag("-P", a.printk, "list the printk formats stored, by address");
  cmd->add_flag("--stat", a.stat, "the kernel's per-CPU buffer statistics and where each CPU's data is");
  cmd->add_flag("--cpus", a.cpu_list, "list the CPUs that hold data, then exit");
  cmd->add_flag("--first-event", a.first_event, "the first time stamp of each CPU");
  cmd->add_flag("--last-event", a.last_event, "the last time stamp of each CPU");
  cmd->add_flag("-l", a.latency, "latency format: irqs-off, need-resched, irq and preempt columns");
  cmd->add_flag("--ts-diff", a.ts_diff, "the time since the line before, (+N)");
  cmd->add_option("--ts2secs", a.ts2secs, "time stamps are ticks of a HZ clock: print them as seconds")
      ->check([](const std::string& v) -> std::string {
        uint64_t hz = 0;
        auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), hz);
        if (ec != std::errc() || end != v.data() + v.size() || hz == 0)
          return fmt::format("HZ must be a whole number above 0, not '{}'", v);
        return {};
      });
  cmd->add_option("--ts-offset", a.ts_offset, "ns to add to time stamps (trace-cmd 3.1.6 ignores it; so do we)");
  cmd->add_flag("-w", a.wakeup, "wakeup latencies: sched_wakeup to sched_switch, with averages at the end");
  cmd->add_option("-F", a.filters, "filter: 'EVENTS[:EXPRESSION]', e.g. 'sched/sched_switch:next_pid == 1'")
      ->allow_extra_args(false);
  cmd->add_flag("-v", a.invert, "leave out what the -F filters after it match");
  cmd->footer(
      "Filters (-F), as trace-cmd report's: EVENTS[:EXPRESSION]. EVENTS is a comma list of\n"
      "system/event or name (a system or an event), each an anchored regular expression\n"
      "matched without case. EXPRESSION compares fields, COMM or CPU with numbers, 'c' or\n"
      "\"strings\": == != < > <= >=; strings also =~ !~ (regular expressions); && and ||\n"
      "(left to right, no precedence), !, parentheses. A record is printed if a filter\n"
      "before -v matches it and none after -v does. --ts-offset is accepted and, as in\n"
      "trace-cmd 3.1.6, changes nothing.");
}

// What a report prints: one view, in trace-cmd report's precedence (the
// listings, the CPU list, --stat, the events).
enum class View { event_formats, functions, printk_formats, event_list, cpu_list, stats, events };

View chosen_view(const ReportArgs& a) {
  if (a.formats) return View::event_formats;
  if (a.functions) return View::functions;
  if (a.printk) return View::printk_formats;
  if (a.list_events) return View::event_list;
  // --first-event and --last-event set trace-read.c's show_cpus too.
  if (a.cpu_list || a.first_event || a.last_event) return View::cpu_list;
  if (a.stat) return View::stats;
  return View::events;
}

// trace-cmd prints the listings and the CPU list before it sets up -F
// filters, so they ignore them, even one naming no event.
bool reads_filters(View view) { return view == View::stats || view == View::events; }

Status write_view(TraceDat& file, View view, const ReportArgs& a, const ReportOptions& options) {
  switch (view) {
    case View::event_formats: return decode::write_event_formats(file, stdout);
    case View::functions: return decode::write_functions(file, stdout);
    case View::printk_formats: return decode::write_printk_formats(file, stdout);
    case View::event_list: return write_event_list(file, stdout);
    case View::cpu_list:
      return write_cpu_list(file, a.input, {.first = a.first_event, .last = a.last_event, .raw_timestamps = a.raw_ts},
                            stdout);
    case View::stats: return decode::write_stats(file, stdout);
    case View::events: break;
  }
  return write_report(file, options, stdout);
}

}  // namespace

void add_report_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("report", "print a trace.dat like `trace-cmd report`");
  auto args = std::make_shared<ReportArgs>();
  add_report_options(cmd, *args);
  cmd->final_callback([args, cmd] {
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
    options.latency_format = args->latency;
    options.ts_diff = args->ts_diff;
    options.wakeup = args->wakeup;
    auto specs = filter_specs(*cmd);
    if (!specs) fail(specs.error().message);
    if (args->ts_offset)
      std::fprintf(stderr, "tracebed: --ts-offset: trace-cmd 3.1.6 leaves the time stamps as they are; so does this\n");
    auto file = TraceDat::open(args->input);
    if (!file) fail(file.error().message);
    (*file)->set_user_time(0, args->ts2secs.value_or(0));
    const View view = chosen_view(*args);
    if (!specs->empty() && reads_filters(view)) {
      auto filter = decode::RecordFilter::make((*file)->context(), *specs);
      if (!filter) fail(filter.error().message);
      options.filter = *filter;
    }
    Status st = write_view(**file, view, *args, options);
    std::fflush(stdout);
    if (!st) fail(st.error().message);
  });
}

}  // namespace tracebed::cli
