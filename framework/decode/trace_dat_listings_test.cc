// What `report --events`, -P and --stat read from a trace.dat beyond the
// events: the stored format files re-read from a v6 file (bounds-checked,
// errors naming the offset), the printk formats' order, the CPUSTAT text.
#include "framework/decode/trace_dat.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "framework/decode/trace_dat_for_tests.h"

namespace tracebed::decode {
namespace {

namespace fs = std::filesystem;

const std::string kV6 = "s2-k6.1-v6-function-sched-kmem";

// Where a v6 file's event systems start (trace-cmd.dat.v6.5): the header,
// header_page and header_event with their u64 sizes, the ftrace formats.
uint64_t event_systems_offset(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::vector<char> b((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  auto u64 = [&](uint64_t at) { return load<uint64_t>(reinterpret_cast<const uint8_t*>(b.data() + at), Endian::little); };
  auto u32 = [&](uint64_t at) { return load<uint32_t>(reinterpret_cast<const uint8_t*>(b.data() + at), Endian::little); };
  uint64_t at = 10 + 2 + 1 + 1 + 4;  // magic and "tracing", "6\0", endian, long size, page size
  at += 12;
  at += 8 + u64(at);  // header_page
  at += 13;
  at += 8 + u64(at);  // header_event
  const uint32_t ftrace = u32(at);
  at += 4;
  for (uint32_t i = 0; i < ftrace; ++i) at += 8 + u64(at);
  return at;
}

class StoredFormats : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = (fs::temp_directory_path() / ("tracebed_listings_" + std::to_string(::getpid()) + ".dat")).string();
    fs::copy_file(kDir + kV6 + ".dat", path_, fs::copy_options::overwrite_existing);
  }
  void TearDown() override { fs::remove(path_); }
  void poke(uint64_t at, std::vector<uint8_t> bytes) {
    std::fstream f(path_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(at));
    f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  }
  std::string path_;
};

TEST_F(StoredFormats, V6FormatsAreTheOnesParsed) {
  auto file = TraceDat::open(path_);
  ASSERT_TRUE(file.ok());
  size_t seen = 0;
  ASSERT_TRUE((*file)->for_each_stored_event_format([&](std::string_view system, std::string_view text) {
    ++seen;
    const size_t name_at = text.find("name: ") + 6;
    const std::string name(text.substr(name_at, text.find('\n', name_at) - name_at));
    EXPECT_NE((*file)->context().event_by_name(system, name), nullptr) << system << ":" << name;
  }).ok());
  EXPECT_GE(seen, 5u);  // sched and kmem events
}

// The file changes under the reader after open: the re-read fails where
// the bytes went wrong, it does not trust the count or size it finds.
TEST_F(StoredFormats, CorruptCountOrSizeNamesTheOffset) {
  const uint64_t at = event_systems_offset(path_);
  auto file = TraceDat::open(path_);
  ASSERT_TRUE(file.ok());
  poke(at, {0xff, 0xff, 0xff, 0xff});
  Status st = (*file)->for_each_stored_event_format([](std::string_view, std::string_view) {});
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().message.find(fmt::format("offset {:#x}: event system count 4294967295 cannot fit", at)), 0u)
      << st.error().message;

  fs::copy_file(kDir + kV6 + ".dat", path_, fs::copy_options::overwrite_existing);
  file = TraceDat::open(path_);
  ASSERT_TRUE(file.ok());
  // The first system's name, its format count, then the first format's size.
  std::ifstream f(path_, std::ios::binary);
  f.seekg(static_cast<std::streamoff>(at + 4));
  std::string name;
  std::getline(f, name, '\0');
  const uint64_t size_at = at + 4 + name.size() + 1 + 4;
  poke(size_at, {0, 0, 0, 0, 0, 0, 0, 0x40});
  st = (*file)->for_each_stored_event_format([](std::string_view, std::string_view) {});
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find(fmt::format("offset {:#x}: event format:", size_at + 8)), std::string::npos)
      << st.error().message;
}

TEST(Listings, V7HasNoStoredFormatsToPrint) {
  auto file = TraceDat::open(kDir + "s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
  ASSERT_TRUE(file.ok());
  size_t seen = 0;
  EXPECT_TRUE((*file)->for_each_stored_event_format([&](std::string_view, std::string_view) { ++seen; }).ok());
  EXPECT_EQ(seen, 0u);
}

TEST(Listings, PrintkFormatsByAddressLaterFirstAndCpuStats) {
  TraceContext ctx;
  ctx.parse_printk_formats("0x20 : \"b\\n\"\n0x10 : \"a\"\n0x20 : \"c\"\n");
  const auto listed = ctx.printk_formats_listed();
  ASSERT_EQ(listed.size(), 3u);
  EXPECT_EQ(listed[0].address, 0x10u);
  EXPECT_EQ(listed[1].text, "c");  // registered later, listed first
  EXPECT_EQ(listed[2].text, "b");

  auto file = TraceDat::open(kDir + "s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
  ASSERT_TRUE(file.ok());
  EXPECT_EQ((*file)->cpu_stats().rfind("CPU: 0\nentries: ", 0), 0u) << (*file)->cpu_stats();
}

}  // namespace
}  // namespace tracebed::decode
