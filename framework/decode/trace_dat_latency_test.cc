// Latency-format files, v6 and v7: the stored `trace` text, as trace-cmd
// prints it.
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

// v6 latency files ("latency" instead of "flyrecord"): the rest of the file
// is the text of the tracefs `trace` file, which trace-cmd prints as is.
class V6Latency : public ::testing::TestWithParam<bool> {};

TEST_P(V6Latency, TextAsTraceCmdPrintsIt) {
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s2-k6.1-v6-function-sched-kmem.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  const bool keep_clock_option = GetParam();
  if (!keep_clock_option)
    std::erase_if(contents->options, [](const TraceDatOption& o) {
      return o.id == static_cast<uint16_t>(TraceDatOptionId::traceclock);
    });
  format.version = 6;
  auto bytes = write_trace_dat(*contents, format);
  ASSERT_TRUE(bytes.ok());
  static const char kTag[] = "flyrecord";
  auto it = std::search(bytes->begin(), bytes->end(), kTag, kTag + sizeof kTag);  // with its NUL
  ASSERT_NE(it, bytes->end());
  bytes->erase(it, bytes->end());
  const std::string text = "# tracer: irqsoff\n#\n# irqsoff latency trace v1.1.5\n  <idle>-0  0d.h1  1us : foo\n";
  const char latency[10] = {'l', 'a', 't', 'e', 'n', 'c', 'y', ' ', ' ', 0};
  bytes->insert(bytes->end(), latency, latency + 10);
  bytes->insert(bytes->end(), text.begin(), text.end());
  const fs::path dir = fs::temp_directory_path() / ("tracebed_latency_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "latency.dat").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes->data()), bytes->size());
  auto dat = TraceDat::open(path);
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  ASSERT_FALSE((*dat)->buffers().empty());
  EXPECT_TRUE((*dat)->buffers()[0].latency);
  auto got = (*dat)->latency_text();
  ASSERT_TRUE(got.ok()) << got.error().message;
  // With a TRACECLOCK option trace-cmd takes the first 8 bytes for a clock
  // blob's size; without one the text is whole.
  EXPECT_EQ(*got, keep_clock_option ? text.substr(8) : text);
  EXPECT_FALSE((*dat)->events().ok());
  if (fs::exists("/usr/bin/trace-cmd")) {
    int status = 0;
    std::string out = trace_cmd_report(path, status);
    EXPECT_EQ(status, 0);
    // trace-read.c read_latency: printf("%s\n", text).
    EXPECT_EQ(out, fmt::format("cpus={}\n", (*dat)->cpu_count()) + *got + "\n");
  }
  fs::remove_all(dir);
}

INSTANTIATE_TEST_SUITE_P(TraceDat, V6Latency, ::testing::Bool(),
                         [](const auto& info) { return info.param ? "with_traceclock" : "plain"; });

// v7 latency files: a BUFFER_TEXT option (offset, name, clock) pointing at a
// "buffer latency" section holding the `trace` text. Built here byte by
// byte (header, headers section, options, the text last as trace-cmd
// writes it) and checked against trace-cmd report.
TEST(TraceDat, V7LatencyText) {
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(kDir + "s3-k5.10-v7none-kprobes-marker.dat", &format);
  ASSERT_TRUE(contents.ok()) << contents.error().message;
  std::vector<uint8_t> f;
  auto put = [&](uint64_t v, int n) {
    for (int i = 0; i < n; ++i) f.push_back(static_cast<uint8_t>(v >> (8 * i)));
  };
  auto put_str = [&](std::string_view t) {
    f.insert(f.end(), t.begin(), t.end());
    f.push_back(0);
  };
  auto section = [&](uint16_t id, uint64_t size) {
    put(id, 2);
    put(0, 2);  // flags: not compressed
    put(0, 4);  // string id
    put(size, 8);
  };
  for (uint8_t b : {0x17, 0x08, 0x44}) f.push_back(b);
  for (char c : std::string_view("tracing")) f.push_back(static_cast<uint8_t>(c));
  put_str("7");
  put(0, 1);      // little-endian
  put(8, 1);      // long size
  put(4096, 4);   // page size
  put_str("none");
  put_str("");
  const size_t options_at_field = f.size();
  put(0, 8);
  // Section 16: header_page and header_event.
  const uint64_t headers_at = f.size();
  const std::string& hp = contents->header_page;
  const std::string& he = contents->header_event;
  section(16, 12 + 8 + hp.size() + 13 + 8 + he.size());
  put_str("header_page");
  put(hp.size(), 8);
  f.insert(f.end(), hp.begin(), hp.end());
  put_str("header_event");
  put(he.size(), 8);
  f.insert(f.end(), he.begin(), he.end());
  // The options, then the text.
  const std::string text = "# tracer: wakeup_rt\n#\n  <idle>-0  1d..3  0us : 0:120:R   + [001]  150:  5:R sh\n";
  const uint64_t options_at = f.size();
  const uint64_t latency_at = options_at + 16 + (6 + 8) + (6 + 8 + 1 + 6) + (6 + 4) + (6 + 8);
  section(0, (6 + 8) + (6 + 8 + 1 + 6) + (6 + 4) + (6 + 8));
  put(16, 2), put(8, 4), put(headers_at, 8);
  put(22, 2), put(8 + 1 + 6, 4), put(latency_at, 8), put_str(""), put_str("local");
  put(8, 2), put(4, 4), put(2, 4);  // CPUCOUNT
  put(0, 2), put(8, 4), put(0, 8);  // DONE, no next options section
  ASSERT_EQ(f.size(), latency_at);
  section(22, text.size());
  f.insert(f.end(), text.begin(), text.end());
  for (int i = 0; i < 8; ++i) f[options_at_field + i] = static_cast<uint8_t>(options_at >> (8 * i));

  const fs::path dir = fs::temp_directory_path() / ("tracebed_v7_latency_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string path = (dir / "latency.dat").string();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(f.data()), f.size());
  auto dat = TraceDat::open(path);
  ASSERT_TRUE(dat.ok()) << dat.error().message;
  ASSERT_FALSE((*dat)->buffers().empty());
  EXPECT_TRUE((*dat)->buffers()[0].latency);
  EXPECT_EQ((*dat)->buffers()[0].clock, "local");
  auto got = (*dat)->latency_text();
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, text);
  if (fs::exists("/usr/bin/trace-cmd")) {
    int status = 0;
    std::string out = trace_cmd_report(path, status);
    EXPECT_EQ(status, 0);
    EXPECT_EQ(out, fmt::format("cpus={}\n", (*dat)->cpu_count()) + text + "\n");
  }
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tracebed::decode
