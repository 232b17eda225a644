// Soft problems are counted and shown as trace-cmd shows them: unknown
// events, lost events, formats that do not parse.
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

// The stream's count of records whose event has no format is the number of
// "[UNKNOWN EVENT]" lines trace-cmd prints for the file.
TEST(DecodeStats, UnknownEventsAreTraceCmdsUnknownLines) {
  const std::string base = kFixtures + "edge/e09-unknown-event";
  auto dat = TraceDat::open(base + ".dat");
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  auto stream = (*dat)->trace_cmd_events();
  ASSERT_TRUE(stream.ok()) << stream.error().message;
  Record r;
  for (;;) {
    auto more = (*stream)->next(r);
    ASSERT_TRUE(more.ok()) << more.error().message;
    if (!*more) break;
  }
  std::vector<std::string> report = zstd_lines(base + ".report.zst");
  const auto unknown = static_cast<uint64_t>(std::count_if(report.begin(), report.end(), [](const std::string& l) {
    return l.find("[UNKNOWN EVENT]") != std::string::npos;
  }));
  EXPECT_GT(unknown, 0u);
  EXPECT_EQ((*stream)->stats().unknown_events, unknown);
}

// Missed events: trace-cmd prints "CPU:N [X EVENTS DROPPED]" before the
// first record of a sub-buffer that reported lost events, except when the
// sub-buffer opens with a time extend (3.1.6's kbuffer loses it there); the
// Record says the truth and flags that case.
TEST(TraceDat, MissedEventsAsTraceCmdShowsThem) {
  const std::string name = "edge/e04-missed-events";
  auto dat = TraceDat::open(kFixtures + name + ".dat");
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  std::vector<std::string> want;
  for (const std::string& l : zstd_lines(kFixtures + name + ".t.report.zst"))
    if (l.find("EVENTS DROPPED]") != std::string::npos) want.push_back(l);
  ASSERT_FALSE(want.empty());
  auto stream = (*dat)->events();
  ASSERT_TRUE(stream.ok());
  std::vector<std::string> got;
  Record r;
  bool saw_hidden = false;
  for (;;) {
    auto more = (*stream)->next(r);
    ASSERT_TRUE(more.ok()) << more.error().message;
    if (!*more) break;
    if (!r.missed_events) continue;
    if (r.missed_not_at_data_start) {
      EXPECT_EQ(r.missed_events, 77u);  // what the fixture stored behind the time extend
      saw_hidden = true;
      continue;
    }
    got.push_back(r.missed_events == kMissedUnknown ? fmt::format("CPU:{} [EVENTS DROPPED]", r.cpu)
                                                    : fmt::format("CPU:{} [{} EVENTS DROPPED]", r.cpu, r.missed_events));
  }
  EXPECT_TRUE(saw_hidden);
  EXPECT_EQ(got, want);
  EXPECT_EQ((*stream)->stats().pages_with_missed, want.size() + 1);
}

// A format that does not parse is a warning, not a failure (trace-cmd
// counts such formats and goes on).
TEST(TraceDat, BadFormatIsAWarning) {
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  ASSERT_FALSE(contents->systems.empty());
  contents->systems[0].formats.push_back("this is not a format file\n");
  const fs::path dir = fs::temp_directory_path() / ("tracebed_warn_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "warn.dat").string();
  ASSERT_TRUE(write_trace_dat_file(path, *contents, format).ok());
  auto dat = TraceDat::open(path);
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  ASSERT_EQ((*dat)->warnings().size(), 1u);
  EXPECT_NE((*dat)->warnings()[0].find(contents->systems[0].name + " format"), std::string::npos)
      << (*dat)->warnings()[0];
  auto good = TraceDat::open(kDir + "s3-k5.10-v7none-kprobes-marker.dat");
  ASSERT_TRUE(good.ok());
  EXPECT_TRUE((*good)->warnings().empty());
  EXPECT_EQ(read_all(**dat).size(), read_all(**good).size());
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracebed::decode
