// The --cpus view (write_cpu_list): which CPUs it lists, against the CPUs of
// the lines in trace-cmd's stored reports, for instances and for CPUs whose
// sub-buffers hold no record (checked with trace-cmd itself where it is),
// and the --first-event/--last-event stamps against the records read.
#include "framework/decode/report_views.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/decode/page_writer.h"
#include "framework/decode/trace_dat_for_tests.h"
#include "framework/decode/trace_dat_writer.h"

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;

std::string cpu_list_text(TraceDat& file, const std::string& shown_path, CpuListStamps stamps = {}) {
  char* buffer = nullptr;
  size_t size = 0;
  std::FILE* out = open_memstream(&buffer, &size);
  Status st = write_cpu_list(file, shown_path, stamps, out);
  std::fclose(out);
  std::string text(buffer, size);
  std::free(buffer);
  EXPECT_TRUE(st.ok()) << st.error().message;
  return text;
}

std::string listing(const std::string& shown_path, const std::set<int>& cpus) {
  std::string text = "List of CPUs in " + shown_path + " with data:\n";
  for (int cpu : cpus) text += "  " + std::to_string(cpu) + "\n";
  return text;
}

// trace-cmd's `report --cpus` of `path`, when Debian's trace-cmd is here.
void expect_trace_cmd_agrees(const std::string& path, const std::string& ours) {
  if (!fs::exists("/usr/bin/trace-cmd")) return;
  int status = 0;
  const std::string theirs = trace_cmd_report(path, status, "--cpus");
  EXPECT_EQ(status, 0);
  EXPECT_EQ(ours, theirs);
}

class CpuList : public ::testing::TestWithParam<std::string> {};

// The CPUs listed are those of the top-level records trace-cmd printed (its
// -R report; an instance's lines start with "NAME:", unknown events name no
// CPU).
TEST_P(CpuList, CpusOfTheTopLevelRecordsTraceCmdPrinted) {
  auto file = TraceDat::open(kFixtures + GetParam() + ".dat");
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::vector<std::string> instance_prefixes;
  for (size_t b = 1; b < (*file)->buffers().size(); ++b) instance_prefixes.push_back((*file)->buffers()[b].name + ":");
  const std::string report = read_zstd_file(kFixtures + GetParam() + ".R.report.zst");
  std::string top_level;
  for (std::string_view line : base::split_lines(report))
    if (std::none_of(instance_prefixes.begin(), instance_prefixes.end(),
                     [&](const std::string& prefix) { return line.starts_with(prefix); }))
      top_level.append(line).push_back('\n');
  std::set<int> cpus;
  for (const OracleLine& line : oracle_of_text(top_level))
    if (!line.unknown) cpus.insert(line.cpu);
  ASSERT_FALSE(cpus.empty());
  EXPECT_EQ(cpu_list_text(**file, GetParam()), listing(GetParam(), cpus));
}

INSTANTIATE_TEST_SUITE_P(Fixtures, CpuList, ::testing::ValuesIn(fixtures()),
                         [](const auto& info) { return test_name(info.param); });

// Sparse CPUs: 4 CPUs, data on 1 and 3 (v6 stores empty entries for 0 and
// 2, v7 leaves them out); 12 CPUs without 6 and 10.
TEST(CpuListOf, SparseCpus) {
  for (auto [stem, cpus] : {std::pair<std::string, std::set<int>>{"edge/e08-empty-cpus-v6", {1, 3}},
                            {"edge/e08-empty-cpus-v7none", {1, 3}},
                            {"recorded/s44-k6.12-v7zstd-12cpus", {0, 1, 2, 3, 4, 5, 7, 8, 9, 11}}}) {
    SCOPED_TRACE(stem);
    auto file = TraceDat::open(kFixtures + stem + ".dat");
    ASSERT_TRUE(file.ok()) << file.error().message;
    EXPECT_EQ(cpu_list_text(**file, "x.dat"), listing("x.dat", cpus));
  }
}

// Only the top-level buffer counts: e10's instances hold CPU 1, the top
// level only CPU 0.
TEST(CpuListOf, TopLevelBufferOnly) {
  const std::string path = kFixtures + "edge/e10-instances-v7zstd.dat";
  auto file = TraceDat::open(path);
  ASSERT_TRUE(file.ok()) << file.error().message;
  std::set<int> instance_cpus;
  for (size_t b = 1; b < (*file)->buffers().size(); ++b)
    for (const TraceDatCpu& cpu : (*file)->buffers()[b].cpus) instance_cpus.insert(cpu.cpu);
  ASSERT_TRUE(instance_cpus.contains(1));
  const std::string ours = cpu_list_text(**file, path);
  EXPECT_EQ(ours, listing(path, {0}));
  expect_trace_cmd_agrees(path, ours);
}

// A CPU whose sub-buffers hold no record has no first record for
// tracecmd_read_cpu_first() and no line: CPU 0 has only a discarded event,
// CPU 2 an empty sub-buffer (commit 0).
TEST(CpuListOf, CpuWithoutRecordsIsLeftOut) {
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kFixtures + "edge/e08-empty-cpus-v7none.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  ASSERT_EQ(contents->buffers.size(), 1u);
  auto& cpus = contents->buffers[0].cpus;
  ASSERT_EQ(cpus.size(), 2u);
  const SubBufferLayout layout{Endian::little, 8, contents->page_size};
  SubBufferWriter discarded(layout, 1'000'000'000);
  ASSERT_TRUE(discarded.discarded(5, 16).ok());
  const SubBufferWriter empty(layout, 1'000'000'000);
  cpus.insert(cpus.begin() + 1, TraceDatCpuData{2, empty.finish()});
  cpus.insert(cpus.begin(), TraceDatCpuData{0, discarded.finish()});
  const fs::path dir = fs::temp_directory_path() / ("tracebed_cpu_list_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  for (int version : {6, 7}) {
    SCOPED_TRACE(version);
    format.version = version;
    const std::string path = (dir / ("v" + std::to_string(version) + ".dat")).string();
    ASSERT_TRUE(write_trace_dat_file(path, *contents, format).ok());
    auto file = TraceDat::open(path);
    ASSERT_TRUE(file.ok()) << file.error().message;
    const std::string ours = cpu_list_text(**file, path);
    EXPECT_EQ(ours, listing(path, {1, 3}));
    expect_trace_cmd_agrees(path, ours);
  }
  fs::remove_all(dir);
}

// With --first-event/--last-event each line gets the stamps of the CPU's
// first and last records, as libtraceevent prints a record's time: µs
// rounded to the nearest ("%6.1000d"; e13's last record is at
// 99.003000500 s), or ns with -t ("%9.1d").
TEST(CpuListOf, FirstAndLastStampsOfEachCpu) {
  for (const std::string stem : {"recorded/s28-k7.2-v7zstd-4cpus-mask", "edge/e13-missed-behind-non-events"}) {
    auto file = TraceDat::open(kFixtures + stem + ".dat");
    ASSERT_TRUE(file.ok()) << file.error().message;
    ASSERT_TRUE((*file)->stamps_in_ns());
    std::map<int, std::pair<uint64_t, uint64_t>> spans;
    for (const Got& r : read_all(**file, {}, /*as_trace_cmd=*/true)) {
      auto [it, fresh] = spans.try_emplace(r.cpu, r.ts, r.ts);
      if (!fresh) it->second.second = r.ts;
    }
    ASSERT_FALSE(spans.empty());
    for (bool ns : {false, true}) {
      SCOPED_TRACE(stem + (ns ? " -t" : ""));
      auto stamp = [&](uint64_t ts) {
        if (ns) return fmt::format("{:5}.{:09}", ts / 1'000'000'000, ts % 1'000'000'000);
        const uint64_t us = (ts + 500) / 1000;
        return fmt::format("{:5}.{:06}", us / 1'000'000, us % 1'000'000);
      };
      std::string want = listing("f", {});
      for (auto [cpu, span] : spans)
        want += fmt::format("  {}\tFirst event:{}\tLast event:{}\n", cpu, stamp(span.first), stamp(span.second));
      EXPECT_EQ(cpu_list_text(**file, "f", {.first = true, .last = true, .raw_timestamps = ns}), want);
    }
  }
}

// Raw counters (x86-tsc) print as "%12llu".
TEST(CpuListOf, RawCounterStamps) {
  auto file = TraceDat::open(kFixtures + "recorded/s24-k6.12-v7zstd-clock-x86-tsc.dat");
  ASSERT_TRUE(file.ok()) << file.error().message;
  ASSERT_FALSE((*file)->stamps_in_ns());
  std::map<int, uint64_t> first;
  for (const Got& r : read_all(**file, {}, /*as_trace_cmd=*/true)) first.try_emplace(r.cpu, r.ts);
  std::string want = listing("f", {});
  for (auto [cpu, ts] : first) want += fmt::format("  {}\tFirst event:{:12}\n", cpu, ts);
  EXPECT_EQ(cpu_list_text(**file, "f", {.first = true}), want);
}

}  // namespace
}  // namespace tracebed::decode
