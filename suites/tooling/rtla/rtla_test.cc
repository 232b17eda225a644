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

#include "framework/tracefs/tracefs_text.h"
#include "suites/latency/support/latency_support.h"
#include "framework/testing/tool_fixture.h"

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

class Rtla : public ToolTest {
 protected:
  void SetUpTest() override {
    if (kHostRtla.empty()) GTEST_SKIP() << "needs rtla: there was none on the host when the suite was configured";
    saved_.emplace(fs().top().files());
    // rtla 6.1 has no --version: it prints its usage, which names it.
    static const std::string version = host_tool_version(kHostRtla, "rtla version", "rtla");
    use_tool({std::string(kGuestRtla)}, version);
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

  // Runs rtla in the guest (a failure fails the test), its output without
  // terminal colours.
  ToolRun rtla(const std::vector<std::string>& args) {
    ToolRun r = tool(args, 120s);
    r.out = without_colours(r.out);
    return r;
  }

  // The rows of rtla's top table by CPU, which must be the guest's CPUs.
  std::map<int, std::vector<std::string>> rows_of(const ToolRun& r) {
    auto rows = table_rows(r.out);
    std::set<int> row_cpus;
    for (const auto& [cpu, w] : rows) row_cpus.insert(cpu);
    auto cpus = inst().cpus();
    EXPECT_OK(cpus);
    EXPECT_EQ(row_cpus, cpus ? std::set<int>(cpus->begin(), cpus->end()) : std::set<int>{})
        << where(r.cmdline) << ": rtla's CPUs vs the guest's\n" << r.out;
    return rows;
  }

  SavedFiles& saved() { return *saved_; }

 private:
  std::optional<SavedFiles> saved_;
};

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
  ToolRun r = rtla({"osnoise", "top", "-q", "-d", "5s", "-r", "20000", "-p", "100000"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_TRUE(r.ok);
  auto per_cpu = by_cpu(osnoise_samples(decoded({"ftrace", "osnoise"}, Order::page)));
  for (const auto& [cpu, w] : rows_of(r)) {
    SCOPED_TRACE(fmt::format("cpu{}", cpu));
    auto theirs = parse_osnoise_row(w);
    ASSERT_TRUE(theirs) << where(r.cmdline) << ": cannot read the row of cpu" << cpu << " in\n" << r.out;
    EXPECT_GT(theirs->periods, 0u) << where(r.cmdline);
    EXPECT_GE(theirs->max_noise, theirs->max_single) << where(r.cmdline);
    EXPECT_LE(theirs->noise, theirs->runtime) << where(r.cmdline);
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
    EXPECT_TRUE(found) << where(r.cmdline) << ": cpu" << cpu << ": no " << theirs->periods
                       << " consecutive periods of the tracer's " << s.size() << " add up to rtla's row\n"
                       << "- rtla:   " << theirs->str() << "\n+ tracer: "
                       << (closest ? closest->str() : std::string("(fewer periods than rtla counted)"))
                       << " (the window closest in runtime)\nrtla printed:\n" << r.out;
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
  ToolRun r = rtla({"timerlat", "top", "-q", "-n", "-d", "5s", "-p", "20000"});
  ASSERT_OK(inst().set_tracing_on(false));
  ASSERT_TRUE(r.ok);
  std::map<int, std::vector<uint64_t>> irq, thread;
  for (const TimerlatSample& s : timerlat_samples(decoded({"ftrace", "timerlat"}, Order::page))) {
    (s.context == 0 ? irq : thread)[s.cpu].push_back(s.latency_ns);
  }
  for (const auto& [cpu, w] : rows_of(r)) {
    SCOPED_TRACE(fmt::format("cpu{}", cpu));
    ASSERT_EQ(w.size(), 10u) << where(r.cmdline) << ": cannot read the row of cpu" << cpu << " in\n" << r.out;
    uint64_t count = to_u64(std::string_view(w[1]).substr(1));
    LatencyStats r_irq{to_u64(w[2]), to_u64(w[3]), to_u64(w[4]), to_u64(w[5])};
    LatencyStats r_thread{to_u64(w[6]), to_u64(w[7]), to_u64(w[8]), to_u64(w[9])};
    ASSERT_NE(count, UINT64_MAX) << where(r.cmdline) << "\n" << r.out;
    EXPECT_GT(count, 0u) << where(r.cmdline) << "\n" << r.out;
    for (const auto* st : {&r_irq, &r_thread}) {
      EXPECT_TRUE(st->min <= st->avg && st->avg <= st->max) << where(r.cmdline) << ": min <= avg <= max: " << st->str();
    }
    EXPECT_TRUE(has_window(irq[cpu], r_irq, count))
        << where(r.cmdline) << ": cpu" << cpu << ": no " << count << " consecutive IRQ latencies of the tracer's "
        << irq[cpu].size() << " have rtla's " << r_irq.str() << "\nrtla printed:\n" << r.out;
    // rtla prints no thread count: any run length will do.
    EXPECT_TRUE(has_window(thread[cpu], r_thread, 0))
        << where(r.cmdline) << ": cpu" << cpu << ": no run of the tracer's " << thread[cpu].size()
        << " thread latencies has rtla's " << r_thread.str() << "\nrtla printed:\n" << r.out;
  }
}

}  // namespace
}  // namespace tracebed::suites
