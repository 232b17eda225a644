// Stamps and time order against trace-cmd report on files written here:
// time options, ties across many CPUs, stamps at the top of the range.
#include "framework/decode/trace_dat.h"

#include <gtest/gtest.h>

#include "framework/base/files.h"
#include "framework/decode/merge.h"
#include "framework/decode/report.h"
#include "framework/decode/trace_dat_for_tests.h"
#include "framework/decode/trace_dat_writer.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <vector>

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;

// TSC2NSEC: mult and shift that make a stamp 1/3 of the raw clock, and an
// offset, which trace-cmd 3.1.6 does not apply.
TraceDatOption tsc2nsec_option() {
  TraceDatOption tsc;
  tsc.id = static_cast<uint16_t>(TraceDatOptionId::tsc2nsec);
  for (uint64_t v : {uint64_t{1398101}, uint64_t{22}}) {
    for (int i = 0; i < 4; ++i) tsc.data.push_back(static_cast<uint8_t>(v >> (8 * i)));
  }
  for (int i = 0; i < 8; ++i) tsc.data.push_back(0);
  return tsc;
}

// TIME_SHIFT: u64 trace id, u32 flags, u32 cpus; per CPU u32 count, then
// count times, offsets, scalings; then count fractions per CPU.
TraceDatOption time_shift_option(uint32_t flags) {
  TraceDatOption o;
  o.id = static_cast<uint16_t>(TraceDatOptionId::time_shift);
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) o.data.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  put(0x1234, 8);
  put(flags, 4);
  put(2, 4);
  const std::vector<std::vector<int64_t>> cpu0 = {{4400000000, 4300000000, 4600000000},  // unsorted on purpose
                                                 {-7000, 1000, 250000},
                                                 {1, 1, 3}};
  put(3, 4);
  for (const auto& v : cpu0)
    for (int64_t x : v) put(static_cast<uint64_t>(x), 8);
  put(1, 4);  // CPU 1: one sample, a plain offset
  put(4000000000, 8);
  put(static_cast<uint64_t>(int64_t{-123}), 8);
  put(1, 8);
  for (int64_t f : {0, 0, 1}) put(static_cast<uint64_t>(f), 8);
  put(0, 8);
  return o;
}

// OFFSET, DATE and TSC2NSEC options change every stamp; trace-cmd report on
// a copy of a real file with those options added is the oracle.
TEST(TraceDat, TimeOptionsMatchTraceCmd) {
  if (!fs::exists("/usr/bin/trace-cmd")) GTEST_SKIP() << "needs trace-cmd: /usr/bin/trace-cmd missing";
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  std::vector<Got> original;
  {
    auto dat = TraceDat::open(kDir + "s3-k5.10-v7none-kprobes-marker.dat");
    ASSERT_TRUE(dat.ok());
    original = read_all(**dat);
  }
  const fs::path dir = fs::temp_directory_path() / ("tracebed_time_options_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  struct Case {
    const char* name;
    std::vector<TraceDatOption> options;
  };
  const std::vector<Case> cases = {
      {"time_shift", {time_shift_option(0)}},
      {"time_shift_interpolated", {time_shift_option(1), TraceDatOption::text(TraceDatOptionId::offset, "77")}},
      {"offset", {TraceDatOption::text(TraceDatOptionId::offset, "123456789")}},
      {"negative_offset", {TraceDatOption::text(TraceDatOptionId::offset, "-4000000000")}},
      {"date", {TraceDatOption::text(TraceDatOptionId::date, "0x100")}},
      {"tsc2nsec", {tsc2nsec_option(), TraceDatOption::text(TraceDatOptionId::offset, "1000")}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    TraceDatContents mod = *contents;
    for (const TraceDatOption& o : c.options) mod.options.push_back(o);
    const std::string path = (dir / (std::string(c.name) + ".dat")).string();
    ASSERT_TRUE(write_trace_dat_file(path, mod, format).ok());
    int status = 0;
    std::vector<OracleLine> want = oracle_of_text(trace_cmd_report(path, status, "-t"));
    ASSERT_EQ(status, 0);
    auto dat = TraceDat::open(path);
    ASSERT_TRUE(dat.ok()) << dat.error().message;
    std::vector<Got> got = read_all(**dat);
    ASSERT_EQ(got.size(), want.size());
    ASSERT_EQ(got.size(), original.size());
    size_t moved = 0;
    for (size_t i = 0; i < got.size(); ++i) {
      SCOPED_TRACE(i);
      ASSERT_EQ(got[i].cpu, want[i].cpu);
      ASSERT_EQ(got[i].ts, want[i].ns());
      moved += got[i].ts != original[i].ts;
    }
    EXPECT_GT(moved, got.size() / 2) << "the option should change the stamps";
  }
  fs::remove_all(dir);
}

// CPUs whose stamps tie in pairs: the merge must pick the lowest CPU on
// ties, as trace-cmd does. CPU i holds s3's CPU 0 pages with every page
// stamp moved by (i / 2) * 3 ns, and every third CPU one page fewer, so
// that CPUs end at different records. Up to kMergeLinearMax CPUs the merge
// scans (and keeps taking the same CPU while it stays earliest); 64 take
// the tournament tree.
class ManyCpusMerge : public ::testing::TestWithParam<int> {};

TEST_P(ManyCpusMerge, LikeTraceCmd) {
  if (!fs::exists("/usr/bin/trace-cmd")) GTEST_SKIP() << "needs trace-cmd: /usr/bin/trace-cmd missing";
  const int n = GetParam();
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  auto& cpus = contents->buffers[0].cpus;
  const std::vector<uint8_t> pages = cpus[0].pages;
  const size_t page_size = contents->page_size;
  ASSERT_GE(pages.size(), 2 * page_size) << "s3's CPU 0 has fewer than two pages";
  cpus.clear();
  for (int i = 0; i < n; ++i) {
    TraceDatCpuData c;
    c.cpu = i;
    c.pages.assign(pages.begin(), pages.end() - static_cast<ptrdiff_t>(i % 3 == 2 ? page_size : 0));
    for (size_t off = 0; off + 8 <= c.pages.size(); off += page_size) {
      uint64_t ts = 0;
      for (int b = 0; b < 8; ++b) ts |= uint64_t{c.pages[off + b]} << (8 * b);
      ts += static_cast<uint64_t>(i / 2) * 3;
      for (int b = 0; b < 8; ++b) c.pages[off + b] = static_cast<uint8_t>(ts >> (8 * b));
    }
    cpus.push_back(std::move(c));
  }
  contents->cpu_count = n;
  const fs::path dir =
      fs::temp_directory_path() / fmt::format("tracebed_many_cpus_{}_{}", n, ::getpid());
  fs::create_directories(dir);
  const std::string path = (dir / "many.dat").string();
  const std::vector<OracleLine> want = write_and_report(path, *contents, format);
  auto dat = TraceDat::open(path);
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  EXPECT_EQ((*dat)->cpu_count(), n);
  expect_order(read_all(**dat), want);
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TraceDat, ManyCpusMerge, ::testing::Values(2, 3, 6, 8, 64),
                         [](const auto& info) { return fmt::format("cpus{}", info.param); });

// Stamps at the very top of the range: CPUs 1 and 2 hold one page of s3's
// CPU 0 each, its stamp moved so that the first record is at 2^64 - 1 (and
// the next ones wrap past zero). The merge's scan marks a finished CPU with
// that same stamp; a CPU that is not finished must still win it.
TEST(TraceDat, StampsAtTheTopOfTheRangeMergeLikeTraceCmd) {
  if (!fs::exists("/usr/bin/trace-cmd")) GTEST_SKIP() << "needs trace-cmd: /usr/bin/trace-cmd missing";
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  auto original = TraceDat::open(kDir + "s3-k5.10-v7none-kprobes-marker.dat");
  ASSERT_TRUE(original.ok()) << original.error().message;
  const std::vector<Got> before = read_all(**original, std::set<int>{0});
  ASSERT_FALSE(before.empty());
  auto& cpus = contents->buffers[0].cpus;
  ASSERT_FALSE(cpus.empty());
  const std::vector<uint8_t> pages = cpus[0].pages;
  const uint32_t page_size = contents->page_size;
  ASSERT_GE(pages.size(), page_size);
  uint64_t first_page_ts = 0;
  for (int b = 0; b < 8; ++b) first_page_ts |= uint64_t{pages[b]} << (8 * b);
  // The first record lies before-ts - page-ts after its page's stamp.
  const uint64_t top_page_ts = first_page_ts + (~uint64_t{0} - before[0].ts);
  cpus.resize(1);
  cpus[0].cpu = 0;
  for (int i = 1; i <= 2; ++i) {
    TraceDatCpuData c;
    c.cpu = i;
    c.pages.assign(pages.begin(), pages.begin() + page_size);
    for (int b = 0; b < 8; ++b) c.pages[b] = static_cast<uint8_t>(top_page_ts >> (8 * b));
    cpus.push_back(std::move(c));
  }
  contents->cpu_count = 3;
  const fs::path dir = fs::temp_directory_path() / ("tracebed_top_stamps_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "top.dat").string();
  const std::vector<OracleLine> want = write_and_report(path, *contents, format);
  auto dat = TraceDat::open(path);
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  for (size_t limit : {kMergeLinearMax, size_t{0}}) {
    SCOPED_TRACE(limit ? "scan" : "tree");
    const size_t saved = kMergeLinearMax;
    kMergeLinearMax = limit;
    std::vector<Got> got = read_all(**dat);
    kMergeLinearMax = saved;
    EXPECT_EQ(std::count_if(got.begin(), got.end(), [](const Got& g) { return g.ts == ~uint64_t{0}; }), 2);
    expect_order(got, want);
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracebed::decode
