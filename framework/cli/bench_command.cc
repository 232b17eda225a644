// `tracebed bench FILE`: times `tracebed report` against `trace-cmd report`
// on the user's own trace.dat, and our event iteration against libtracecmd's
// tracecmd_iterate_events, alternating the two tools run by run so both see
// the same machine. Every run is a child process writing to a pipe: the
// parent hashes the text (the outputs must be byte-identical), takes the
// wall time, and reads peak RSS and CPU time from wait4's rusage. With more
// than one CPU, report runs twice: pinned to one CPU and free.
#include "framework/cli/commands.h"

#include <sched.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "framework/base/process.h"
#include "framework/cli/stream_hash.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::cli {
namespace {

using decode::EventFormat;
using decode::Record;
using decode::TraceDat;

struct RunResult {
  bool ok = false;
  std::string error;
  double wall_s = 0, cpu_s = 0;
  long max_rss_kib = 0;
  uint64_t out_bytes = 0, out_hash = 0;
  std::string head;  // the first bytes of output (iterate's "events=N ids=M")
};

// Runs argv with stdout hashed as it arrives (stderr dropped); `one_cpu`
// pins the child (and every thread it starts) to the first CPU this
// process may use. posix_spawn rather than fork (die_with_parent off): the
// child does not copy this process's page tables, nor does this process
// then take a copy-on-write fault for each page it writes while the child
// runs.
RunResult run_child(const std::vector<std::string>& argv, bool one_cpu) {
  RunResult r;
  StreamHash hash;
  base::ProcessOptions o;
  o.output = base::Output::stream;
  o.one_cpu = one_cpu;
  o.die_with_parent = false;
  o.on_output = [&](std::string_view chunk) {
    if (r.head.size() < 256) r.head.append(chunk.substr(0, 256));
    hash.update(reinterpret_cast<const uint8_t*>(chunk.data()), chunk.size());
  };
  auto run = base::run_process(argv, o);
  if (!run) {
    r.error = run.error().message;
    return r;
  }
  r.wall_s = std::chrono::duration<double>(run->wall).count();
  r.cpu_s = run->cpu_seconds;
  r.max_rss_kib = run->max_rss_kib;
  r.out_bytes = hash.bytes();
  r.out_hash = hash.finish();
  if (run->status != 0) {
    r.error = fmt::format("{} failed (status {})", argv[0], run->status);
  } else {
    r.ok = true;
  }
  return r;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

struct Side {
  std::vector<double> wall, cpu;
  long max_rss_kib = 0;
  uint64_t bytes = 0, hash = 0;
  std::string head;
  std::string error;
};

// Alternates a and b `runs` times (a first on odd runs, b first on even).
void alternate(const std::vector<std::string>& a, const std::vector<std::string>& b, bool one_cpu, int runs,
               Side& sa, Side& sb) {
  for (int i = 0; i < runs; ++i) {
    for (int k = 0; k < 2; ++k) {
      const bool first_a = i % 2 == 0;
      const bool is_a = (k == 0) == first_a;
      Side& s = is_a ? sa : sb;
      if (!s.error.empty()) continue;
      RunResult r = run_child(is_a ? a : b, one_cpu);
      if (!r.ok) {
        s.error = r.error;
        continue;
      }
      s.wall.push_back(r.wall_s);
      s.cpu.push_back(r.cpu_s);
      s.max_rss_kib = std::max(s.max_rss_kib, r.max_rss_kib);
      s.bytes = r.out_bytes;
      s.hash = r.out_hash;
      s.head = r.head;
    }
  }
}


// The iteration side run as a child: every record visited (for_each, as
// tracecmd_iterate_events calls back per record), its event looked up.
void iterate_only(const std::string& path) {
  auto file = TraceDat::open(path);
  if (!file) fail(file.error().message);
  auto stream = (*file)->trace_cmd_events();
  if (!stream) fail(stream.error().message);
  uint64_t events = 0, ids = 0;
  Status st = (*stream)->for_each([&](const Record& record) {
    ++events;
    if (const EventFormat* event = record.event) ids += event->id;  // looked up by the stream
    return true;
  });
  if (!st) fail(st.error().message);
  fmt::print("events={} ids={}\n", events, ids);
}

uint64_t parse_events(const std::string& head) {
  uint64_t n = 0;
  if (std::sscanf(head.c_str(), "events=%lu", &n) != 1) return 0;
  return n;
}

std::string rate(uint64_t events, double s) {
  if (s <= 0 || events == 0) return "-";
  const double r = static_cast<double>(events) / s;
  return r >= 1e6 ? fmt::format("{:.2f} M/s", r / 1e6) : fmt::format("{:.0f} k/s", r / 1e3);
}

void print_row(const std::string& what, const std::string& cpus, uint64_t events, const Side& ours,
               const Side& peer) {
  auto cell = [&](const Side& s) {
    if (!s.error.empty()) return fmt::format("{:<30}", s.error.substr(0, 30));
    const double t = median(s.wall);
    // A child's peak RSS counts the memory it shared with this process
    // until its exec: one no larger than ours is only known to be at most that.
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    const std::string rss = fmt::format("{}{:.1f}", s.max_rss_kib <= self.ru_maxrss ? "<=" : "",
                                        static_cast<double>(s.max_rss_kib) / 1024);
    return fmt::format("{:>8.3f} s {:>11} {:>7} MiB", t, rate(events, t), rss);
  };
  std::string ratio = "-";
  if (ours.error.empty() && peer.error.empty() && median(ours.wall) > 0)
    ratio = fmt::format("{:.1f}x", median(peer.wall) / median(ours.wall));
  fmt::print("{:<9} {:<5} {}   {}   {:>7}\n", what, cpus, cell(ours), cell(peer), ratio);
}

struct BenchArgs {
  std::string input;
  int runs = 3;
  std::string trace_cmd = "trace-cmd";
  std::string peer;
  bool iterate_only = false;
};

// Every distinct error of the rows, whole, where a cell has room for its
// start only.
struct BenchErrors {
  std::vector<std::string> all;
  void keep(const Side& ours, const Side& peer) {
    for (const Side* s : {&ours, &peer})
      if (!s->error.empty() && std::find(all.begin(), all.end(), s->error) == all.end()) all.push_back(s->error);
  }
};

std::vector<bool> cpu_rows(int ncpu) { return ncpu > 1 ? std::vector<bool>{true, false} : std::vector<bool>{true}; }

struct ReportComparison {
  bool identical = true, compared = false;
  uint64_t text_bytes = 0;
};

// The report rows: tracebed report against trace-cmd report, on one CPU
// and on all, and whether their text was the same.
ReportComparison report_rows(const BenchArgs& a, const std::string& self, int ncpu, uint64_t events,
                             BenchErrors& errors) {
  const std::vector<std::string> ours_report{self, "report", "-i", a.input};
  const std::vector<std::string> tc_report{a.trace_cmd, "report", "-i", a.input};
  ReportComparison c;
  for (bool one : cpu_rows(ncpu)) {
    Side ours, peer_side;
    alternate(ours_report, tc_report, one, a.runs, ours, peer_side);
    print_row("report", one ? "1" : fmt::format("{}", ncpu), events, ours, peer_side);
    errors.keep(ours, peer_side);
    if (ours.error.empty() && peer_side.error.empty()) {
      c.identical = c.identical && ours.bytes == peer_side.bytes && ours.hash == peer_side.hash;
      c.text_bytes = ours.bytes;
      c.compared = true;
    }
  }
  return c;
}

// The iterate rows: our iteration API against libtracecmd's, when its
// program was built.
void iterate_rows(const BenchArgs& a, const std::string& self, int ncpu, uint64_t events, BenchErrors& errors) {
  std::string peer = a.peer;
  if (peer.empty()) peer = (std::filesystem::path(self).parent_path() / "tracecmd_iterate_peer").string();
  if (access(peer.c_str(), X_OK) != 0) {
    fmt::print("iterate   skipped: no {} (built when libtracecmd-dev is installed)\n", peer);
    return;
  }
  for (bool one : cpu_rows(ncpu)) {
    Side ours, peer_side;
    alternate({self, "bench", "--iterate-only", a.input}, {peer, a.input}, one, a.runs, ours, peer_side);
    print_row("iterate", one ? "1" : fmt::format("{}", ncpu), events, ours, peer_side);
    errors.keep(ours, peer_side);
    if (ours.error.empty() && peer_side.error.empty() && ours.head != peer_side.head)
      fmt::print("          records differ: tracebed {} / libtracecmd {}", ours.head, peer_side.head);
  }
}

void run_bench(const BenchArgs& a) {
  if (a.iterate_only) return iterate_only(a.input);
  if (a.runs < 1) usage_error("--runs must be at least 1");
  auto file = TraceDat::open(a.input);
  if (!file) fail(file.error().message);
  struct stat st{};
  stat(a.input.c_str(), &st);
  const std::string self = tracebed_exe();
  cpu_set_t mine;
  CPU_ZERO(&mine);
  sched_getaffinity(0, sizeof mine, &mine);
  const int ncpu = CPU_COUNT(&mine);

  // The record count, from one untimed pass of our own iteration.
  RunResult count = run_child({self, "bench", "--iterate-only", a.input}, false);
  if (!count.ok) fail(fmt::format("counting records: {}", count.error));
  const uint64_t events = parse_events(count.head);
  fmt::print("file      {} ({:.1f} MiB, v{} {}, {} CPUs in the file, {} records)\n", a.input,
             static_cast<double>(st.st_size) / (1 << 20), (*file)->version(), (*file)->compression(),
             (*file)->cpu_count(), events);
  fmt::print("machine   {} CPUs usable; {} runs per cell, alternating; median wall time\n", ncpu, a.runs);
  fmt::print("{:<9} {:<5} {:<34}   {:<34}   {:>7}\n", "", "cpus", "tracebed", "peer (trace-cmd 3.1.6 / libtracecmd)",
             "ratio");
  BenchErrors errors;
  const ReportComparison report = report_rows(a, self, ncpu, events, errors);
  iterate_rows(a, self, ncpu, events, errors);
  for (const std::string& e : errors.all) fmt::print("error     {}\n", e);
  if (!report.compared) fail("no report row ran both tools, so their text was not compared");
  fmt::print("output    {} ({} bytes of report text)\n", report.identical ? "identical" : "DIFFERENT", report.text_bytes);
  if (!report.identical)
    fail("tracebed report and trace-cmd report printed different text (diff the two reports; docs/performance.md, "
         "\"When the outputs differ\", names the one trace-cmd 3.1.6 bug known to cause it)");
  if (!errors.all.empty()) fail("a run failed: see the error lines above");
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "bench", "time `tracebed report` against `trace-cmd report` (and libtracecmd iteration) on a trace.dat");
  auto args = std::make_shared<BenchArgs>();
  cmd->add_option("file", args->input, "trace.dat to read")->required();
  cmd->add_option("--runs", args->runs, "runs of each tool per row (the median is shown)")->capture_default_str();
  cmd->add_option("--trace-cmd", args->trace_cmd, "the trace-cmd to compare with")->capture_default_str();
  cmd->add_option("--peer", args->peer,
                  "the libtracecmd iteration program (default: tracecmd_iterate_peer beside tracebed)");
  cmd->add_flag("--iterate-only", args->iterate_only,
                "print the record count of FILE through our iteration API (the child side of the iterate row)");
  cmd->final_callback([args] { run_bench(*args); });
}

}  // namespace tracebed::cli
