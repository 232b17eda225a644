// rtla (the host's, copied into the guest with its libraries) on kernels
// with the osnoise and timerlat tracers, checked against the tracer itself:
// before rtla starts, the test runs the same tracer in an instance of its
// own. The kernel writes every osnoise period and every timerlat
// activation into each instance running the tracer (trace_osnoise.c), so
// the test's instance holds everything rtla's did, plus a little before
// and after. rtla's per-CPU numbers must therefore be exactly those of a
// run of consecutive samples of ours, decoded from the raw pages:
//   osnoise top:  periods, runtime and noise sums, % available, max noise,
//                 max single noise, HW/NMI/IRQ/softirq/thread counts;
//   timerlat top: IRQ count, and for IRQ and thread context the last,
//                 min, average (truncated) and max latency, in ns (-n).
// Tolerance: none on the numbers; only the window's ends are searched.
// Every failure names the tool, the kernel, the command line and the diff.
#include <algorithm>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/text.h"
#include "framework/vm/process.h"
#include "suites/latency/support/latency_support.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using namespace std::chrono_literals;

// Where `tracebed_guest_suite(... TOOLS ...)` puts a tool in the guest.
constexpr std::string_view kGuestRtla = "/opt/tracebed/bin/rtla";
constexpr std::string_view kHostRtla = TRACEBED_HOST_RTLA;

uint64_t to_u64(std::string_view s) {
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return UINT64_MAX;
    v = v * 10 + (c - '0');
  }
  return s.empty() ? UINT64_MAX : v;
}

// rtla's output without its terminal colour sequences (ESC [ ... m).
std::string without_colours(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t m = s.find('m', i);
      if (m != std::string_view::npos) {
        i = m;
        continue;
      }
    }
    out += s[i];
  }
  return out;
}

class Rtla : public TracefsTest {
 protected:
  void SetUpTest() override {
    if (kHostRtla.empty()) GTEST_SKIP() << "needs rtla: there was none on the host when the suite was configured";
    saved_.emplace(fs().top().files());
    static std::string version = [] {
      // rtla 6.1 has no --version: it prints its usage, which names it.
      auto r = vm::run_process({std::string(kHostRtla), "--version"}, 30s);
      std::string output = r ? r->output : std::string();
      for (auto line : tracefs::split_lines(output)) {
        if (line.find("rtla version") != std::string_view::npos) return std::string(tracefs::trim(line));
      }
      return std::string("rtla");
    }();
    version_ = version;
    RecordProperty("tool", version_);
  }

  void TearDown() override {
    if (saved_) {
      EXPECT_OK(inst().set_tracer("nop"));
      EXPECT_OK(saved_->restore());
    }
    // A failed run may leave rtla's instances behind.
    for (const char* name : {"osnoise_top", "timerlat_top"}) (void)fs().remove_instance(name);
    TracefsTest::TearDown();
  }

  // "rtla version 6.1 on debian-7.2-rt (7.2.13+deb14-rt-amd64): `rtla osnoise top ...`"
  std::string where(std::string_view cmdline) {
    return fmt::format("{} on {} ({}): `{}`", version_, testing::environment().options().kernel,
                       testing::guest().release(), cmdline);
  }

  // Runs rtla in the guest; a failure fails the test. The output on success.
  std::optional<std::string> rtla(const std::vector<std::string>& args, std::string& cmdline) {
    std::vector<std::string> argv = {std::string(kGuestRtla)};
    argv.insert(argv.end(), args.begin(), args.end());
    cmdline = fmt::format("rtla {}", fmt::join(args, " "));
    auto r = testing::guest().run(argv, 120s);
    if (!r) {
      ADD_FAILURE() << where(cmdline) << ": " << r.error().message;
      return std::nullopt;
    }
    if (!r->ok()) {
      ADD_FAILURE() << where(cmdline) << ": status " << r->shell_status() << (r->timed_out ? " (timed out)" : "")
                    << "\nstderr:\n" << r->err << "\nstdout:\n" << r->out;
      return std::nullopt;
    }
    return without_colours(r->out);
  }

  SavedFiles& saved() { return *saved_; }
  std::set<int> cpus() {
    auto c = inst().cpus();
    EXPECT_OK(c);
    return c ? std::set<int>(c->begin(), c->end()) : std::set<int>{};
  }

  std::string version_;

 private:
  std::optional<SavedFiles> saved_;
};

// The rows of rtla's top table: lines whose first word is a CPU number,
// split into words ("#48" kept as is), by CPU.
std::map<int, std::vector<std::string>> table_rows(const std::string& out) {
  std::map<int, std::vector<std::string>> rows;
  for (auto line : tracefs::split_lines(out)) {
    auto w = tracefs::split_words(line);
    if (w.size() < 3 || to_u64(w[0]) == UINT64_MAX || !w[1].starts_with('#')) continue;
    std::vector<std::string> words;
    for (auto x : w) {
      if (x != "|") words.emplace_back(x);
    }
    rows[static_cast<int>(to_u64(w[0]))] = std::move(words);
  }
  return rows;
}

// osnoise top's row: CPU #PERIODS RUNTIME NOISE %AVAIL MAXNOISE MAXSINGLE HW NMI IRQ SOFTIRQ THREAD.
struct OsnoiseTotals {
  uint64_t periods = 0, runtime = 0, noise = 0, max_noise = 0, max_single = 0;
  uint64_t hw = 0, nmi = 0, irq = 0, softirq = 0, thread = 0;
  std::string available;
  std::string str() const {
    return fmt::format("#{} runtime {} noise {} ({}) max noise {} max single {} hw {} nmi {} irq {} sirq {} thread {}",
                       periods, runtime, noise, available, max_noise, max_single, hw, nmi, irq, softirq, thread);
  }
  bool operator==(const OsnoiseTotals&) const = default;
};

std::optional<OsnoiseTotals> parse_osnoise_row(const std::vector<std::string>& w) {
  if (w.size() != 12) return std::nullopt;
  OsnoiseTotals t;
  uint64_t* fields[] = {&t.runtime, &t.noise, &t.max_noise, &t.max_single, &t.hw,
                        &t.nmi,     &t.irq,   &t.softirq,   &t.thread};
  const int at[] = {2, 3, 5, 6, 7, 8, 9, 10, 11};
  t.periods = to_u64(std::string_view(w[1]).substr(1));
  t.available = w[4];
  for (int i = 0; i < 9; ++i) *fields[i] = to_u64(w[at[i]]);
  for (uint64_t* f : fields)
    if (*f == UINT64_MAX) return std::nullopt;
  if (t.periods == UINT64_MAX) return std::nullopt;
  return t;
}

OsnoiseTotals totals_of(const std::vector<OsnoiseSample>& s, size_t from, size_t n) {
  OsnoiseTotals t;
  t.periods = n;
  for (size_t i = from; i < from + n; ++i) {
    t.runtime += s[i].runtime;
    t.noise += s[i].noise;
    t.max_noise = std::max(t.max_noise, s[i].noise);
    t.max_single = std::max(t.max_single, s[i].max_sample);
    t.hw += s[i].hw;
    t.nmi += s[i].nmi;
    t.irq += s[i].irq;
    t.softirq += s[i].softirq;
    t.thread += s[i].thread;
  }
  t.available = osnoise_available(t.runtime, t.noise);
  return t;
}

TEST_F(Rtla, OsnoiseTopEqualsTheTracersPeriods) {
  TRACEBED_REQUIRE(Feature::tracer("osnoise"));
  // rtla sets these from -r/-p too; ours start with the same values.
  ASSERT_OK(saved().set("osnoise/runtime_us", "20000"));
  ASSERT_OK(saved().set("osnoise/period_us", "100000"));
  ASSERT_OK(saved().save("osnoise/cpus"));
  ASSERT_OK(saved().save("tracing_thresh"));
  ASSERT_OK(inst().set_tracer("osnoise"));
  std::string cmdline;
  auto out = rtla({"osnoise", "top", "-q", "-d", "5s", "-r", "20000", "-p", "100000"}, cmdline);
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_TRUE(out);
  auto events = read_events(fs(), inst(), {{"ftrace", "osnoise"}});
  ASSERT_OK(events);
  EXPECT_EQ(events->missed, 0u) << "our instance lost events: its windows are incomplete";
  auto ours = osnoise_samples(*events);
  std::map<int, std::vector<OsnoiseSample>> per_cpu;
  for (const auto& s : ours) per_cpu[s.cpu].push_back(s);

  auto rows = table_rows(*out);
  std::set<int> row_cpus;
  for (const auto& [cpu, w] : rows) row_cpus.insert(cpu);
  EXPECT_EQ(row_cpus, cpus()) << where(cmdline) << ": rtla's CPUs vs the guest's\n" << *out;
  for (const auto& [cpu, w] : rows) {
    SCOPED_TRACE(fmt::format("cpu{}", cpu));
    auto theirs = parse_osnoise_row(w);
    ASSERT_TRUE(theirs) << where(cmdline) << ": cannot read the row of cpu" << cpu << " in\n" << *out;
    EXPECT_GT(theirs->periods, 0u) << where(cmdline);
    EXPECT_GE(theirs->max_noise, theirs->max_single) << where(cmdline);
    EXPECT_LE(theirs->noise, theirs->runtime) << where(cmdline);
    const auto& s = per_cpu[cpu];
    bool found = false;
    std::optional<OsnoiseTotals> closest;
    if (theirs->periods <= s.size()) {
      for (size_t from = 0; from + theirs->periods <= s.size() && !found; ++from) {
        OsnoiseTotals t = totals_of(s, from, theirs->periods);
        found = t == *theirs;
        if (!closest || (t.runtime > theirs->runtime ? t.runtime - theirs->runtime : theirs->runtime - t.runtime) <
                            (closest->runtime > theirs->runtime ? closest->runtime - theirs->runtime
                                                                : theirs->runtime - closest->runtime))
          closest = t;
      }
    }
    EXPECT_TRUE(found) << where(cmdline) << ": cpu" << cpu << ": no " << theirs->periods
                       << " consecutive periods of the tracer's " << s.size() << " add up to rtla's row\n"
                       << "- rtla:   " << theirs->str() << "\n+ tracer: "
                       << (closest ? closest->str() : std::string("(fewer periods than rtla counted)"))
                       << " (the window closest in runtime)\nrtla printed:\n" << *out;
  }
}

// timerlat top -n's row: CPU #COUNT | cur min avg max | cur min avg max.
struct LatencyStats {
  uint64_t cur = 0, min = 0, avg = 0, max = 0;
  bool operator==(const LatencyStats&) const = default;
  std::string str() const { return fmt::format("cur {} min {} avg {} max {}", cur, min, avg, max); }
};

LatencyStats stats_of(const std::vector<uint64_t>& v, size_t from, size_t n) {
  LatencyStats s;
  s.min = UINT64_MAX;
  uint64_t sum = 0;
  for (size_t i = from; i < from + n; ++i) {
    s.min = std::min(s.min, v[i]);
    s.max = std::max(s.max, v[i]);
    sum += v[i];
  }
  s.cur = v[from + n - 1];
  s.avg = sum / n;
  return s;
}

// Some run of n consecutive latencies (any n when n is 0) with these stats.
bool has_window(const std::vector<uint64_t>& v, const LatencyStats& want, size_t n) {
  for (size_t len = n ? n : 1; len <= (n ? n : v.size()); ++len) {
    for (size_t from = 0; from + len <= v.size(); ++from) {
      if (stats_of(v, from, len) == want) return true;
    }
  }
  return false;
}

TEST_F(Rtla, TimerlatTopEqualsTheTracersActivations) {
  TRACEBED_REQUIRE(Feature::tracer("timerlat"));
  ASSERT_OK(saved().set("osnoise/timerlat_period_us", "20000"));
  ASSERT_OK(saved().save("osnoise/cpus"));
  ASSERT_OK(saved().save("osnoise/stop_tracing_us"));
  ASSERT_OK(saved().save("osnoise/stop_tracing_total_us"));
  ASSERT_OK(saved().save("osnoise/print_stack"));
  ASSERT_OK(inst().set_tracer("timerlat"));
  std::string cmdline;
  auto out = rtla({"timerlat", "top", "-q", "-n", "-d", "5s", "-p", "20000"}, cmdline);
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_TRUE(out);
  auto events = read_events(fs(), inst(), {{"ftrace", "timerlat"}});
  ASSERT_OK(events);
  EXPECT_EQ(events->missed, 0u) << "our instance lost events: its windows are incomplete";
  std::map<int, std::vector<uint64_t>> irq, thread;
  for (const TimerlatSample& s : timerlat_samples(*events)) {
    (s.context == 0 ? irq : thread)[s.cpu].push_back(s.latency_ns);
  }

  auto rows = table_rows(*out);
  std::set<int> row_cpus;
  for (const auto& [cpu, w] : rows) row_cpus.insert(cpu);
  EXPECT_EQ(row_cpus, cpus()) << where(cmdline) << ": rtla's CPUs vs the guest's\n" << *out;
  for (const auto& [cpu, w] : rows) {
    SCOPED_TRACE(fmt::format("cpu{}", cpu));
    ASSERT_EQ(w.size(), 10u) << where(cmdline) << ": cannot read the row of cpu" << cpu << " in\n" << *out;
    uint64_t count = to_u64(std::string_view(w[1]).substr(1));
    LatencyStats r_irq{to_u64(w[2]), to_u64(w[3]), to_u64(w[4]), to_u64(w[5])};
    LatencyStats r_thread{to_u64(w[6]), to_u64(w[7]), to_u64(w[8]), to_u64(w[9])};
    ASSERT_NE(count, UINT64_MAX) << where(cmdline) << "\n" << *out;
    EXPECT_GT(count, 0u) << where(cmdline) << "\n" << *out;
    for (const auto* st : {&r_irq, &r_thread}) {
      EXPECT_TRUE(st->min <= st->avg && st->avg <= st->max) << where(cmdline) << ": min <= avg <= max: " << st->str();
    }
    EXPECT_TRUE(has_window(irq[cpu], r_irq, count))
        << where(cmdline) << ": cpu" << cpu << ": no " << count << " consecutive IRQ latencies of the tracer's "
        << irq[cpu].size() << " have rtla's " << r_irq.str() << "\nrtla printed:\n" << *out;
    // rtla prints no thread count: any run length will do.
    EXPECT_TRUE(has_window(thread[cpu], r_thread, 0))
        << where(cmdline) << ": cpu" << cpu << ": no run of the tracer's " << thread[cpu].size()
        << " thread latencies has rtla's " << r_thread.str() << "\nrtla printed:\n" << *out;
  }
}

}  // namespace
}  // namespace tracebed::suites
