// The line parsers on lines captured from real kernels' `trace` (debian
// 7.2-rt under TCG, and the examples of Documentation/trace/
// osnoise-tracer.rst and timerlat-tracer.rst, which print one flag column
// less), and SavedFiles on a local directory.
#include "suites/latency/support/latency_support.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/tracefs/file_ops.h"

namespace tracebed::suites {
namespace {

TEST(TraceHead, SplitsTaskPidCpuFlagsAndTime) {
  auto h = parse_trace_head("           <...>-138     [000] ....1    13.474636: 23787      20217  15.00819");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->task, "<...>");
  EXPECT_EQ(h->pid, 138);
  EXPECT_EQ(h->cpu, 0);
  EXPECT_EQ(h->flags, "....1");
  EXPECT_EQ(h->ts_us, 13474636u);
  EXPECT_EQ(h->body, "23787      20217  15.00819");
}

TEST(TraceHead, TaskWithDashesAndSpaces) {
  auto h = parse_trace_head(
      "      timerlat/5-1035    [005] .......   548.771104: #402268 context thread timer_latency 39960 ns");
  ASSERT_TRUE(h);
  EXPECT_EQ(h->task, "timerlat/5");
  EXPECT_EQ(h->pid, 1035);
  EXPECT_EQ(h->cpu, 5);
  auto k = parse_trace_head(" kworker/u4:1-rt-7  [001] d..1.  1.000001: x");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->task, "kworker/u4:1-rt");
  EXPECT_EQ(k->pid, 7);
}

TEST(TraceHead, RejectsLinesWithoutTheHead) {
  EXPECT_FALSE(parse_trace_head("# tracer: osnoise"));
  EXPECT_FALSE(parse_trace_head("  => timerlat_irq"));
  EXPECT_FALSE(parse_trace_head("<...>-1 [000] .... 13.47: short microseconds"));
}

// A captured `trace` line through the head's parser and the tracer's.
template <typename ParseBody>
auto parse_line(std::string_view line, ParseBody parse_body) -> decltype(parse_body(TraceHead{})) {
  auto head = parse_trace_head(line);
  if (!head) return std::nullopt;
  return parse_body(*head);
}

TEST(OsnoiseLine, CapturedOnRtKernel) {
  auto s = parse_line(
      "           <...>-139     [001] ....1    14.475051: 27964      20260  27.54970   13173"
      "      8      0      4      0      2",
      parse_osnoise_line);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->cpu, 1);
  EXPECT_EQ(s->runtime, 27964u);
  EXPECT_EQ(s->noise, 20260u);
  EXPECT_EQ(s->available, "27.54970");
  EXPECT_EQ(s->max_sample, 13173u);
  EXPECT_EQ(s->hw, 8u);
  EXPECT_EQ(s->irq, 4u);
  EXPECT_EQ(s->thread, 2u);
}

TEST(OsnoiseAvailable, AsTheKernelPrintsIt) {
  // Pairs from captured lines: (runtime, noise) -> "% OF CPU AVAILABLE".
  EXPECT_EQ(osnoise_available(23787, 20217), "15.00819");
  EXPECT_EQ(osnoise_available(27964, 20260), "27.54970");
  EXPECT_EQ(osnoise_available(1000000, 190), "99.98100");   // osnoise-tracer.rst
  EXPECT_EQ(osnoise_available(1000000, 5675), "99.43250");  // osnoise-tracer.rst
  EXPECT_EQ(osnoise_available(0, 0), "");
}

TEST(TimerlatLine, IrqThreadAndOlderFlagColumns) {
  auto s = parse_line(
      "          <idle>-0       [001] dNh1.    14.894104: #1     context    irq timer_latency   9925187 ns",
      parse_timerlat_line);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->seq, 1u);
  EXPECT_EQ(s->context, 0);
  EXPECT_EQ(s->latency_ns, 9925187u);
  auto t = parse_line(
      "           <...>-867     [000] ....    54.029339: #1     context thread timer_latency     11700 ns",
      parse_timerlat_line);
  ASSERT_TRUE(t);
  EXPECT_EQ(t->context, 1);
  EXPECT_EQ(t->latency_ns, 11700u);
  EXPECT_EQ(timerlat_context_name(2), "user-ret");
}

TEST(TracerLines, SkipsEventLinesAndNamesABadOne) {
  std::string trace =
      "# tracer: timerlat\n"
      "#\n"
      "          <idle>-0       [000] d.h1.    14.922398: #5     context    irq timer_latency   1235731 ns\n"
      "       osnoise/8-961     [008] d.h.  5789.857532: irq_noise: local_timer:236 start 5789.857529929"
      " duration 1845 ns\n"
      "           <...>-145     [000] ....1    14.922509: #5     context thread timer_latency   1349880 ns\n";
  auto lines = timerlat_lines(trace);
  ASSERT_OK(lines);
  ASSERT_EQ(lines->size(), 2u);
  EXPECT_EQ((*lines)[1].latency_ns, 1349880u);

  auto bad = timerlat_lines(trace + "           <...>-145     [000] ....1    14.922509: #6     context thread\n");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.error().message, HasSubstr("trace line 6: not a timerlat line"));
  auto headless = osnoise_lines("garbage without a head\n");
  ASSERT_FALSE(headless.ok());
  EXPECT_THAT(headless.error().message, HasSubstr("trace line 1"));
}

TEST(TraceUs, RoundsAsTracePrints) {
  EXPECT_EQ(trace_us(13474636499), 13474636u);
  EXPECT_EQ(trace_us(13474636500), 13474637u);
}

TEST(SavedFiles, RestoresLastSavedFirst) {
  namespace stdfs = std::filesystem;
  std::string tmpl = (stdfs::temp_directory_path() / "tracebed-saved-XXXXXX").string();
  ASSERT_TRUE(::mkdtemp(tmpl.data()));
  stdfs::path dir = tmpl;
  std::ofstream(dir / "runtime_us") << "1000000\n";
  std::ofstream(dir / "period_us") << "1000000\n";
  auto ops = std::make_shared<tracefs::LocalFileOps>();
  tracefs::Files files(ops, dir.string(), (dir / "error_log").string());
  {
    SavedFiles saved(files);
    ASSERT_TRUE(saved.set("runtime_us", "20000").ok());
    ASSERT_TRUE(saved.set("period_us", "100000").ok());
    ASSERT_TRUE(saved.save("missing_file").ok());  // absent: nothing to put back
    EXPECT_EQ(*files.read("runtime_us"), "20000");
    ASSERT_TRUE(saved.restore().ok());
  }
  EXPECT_EQ(*files.read("runtime_us"), "1000000");
  EXPECT_EQ(*files.read("period_us"), "1000000");
  EXPECT_FALSE(stdfs::exists(dir / "missing_file"));
  stdfs::remove_all(dir);
}

}  // namespace
}  // namespace tracebed::suites
