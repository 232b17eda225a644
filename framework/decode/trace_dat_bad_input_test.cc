// Bad input: copies of real fixtures truncated or overwritten, and the files
// of fixtures/corrupt, each failing with its exact message.
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

// ---------------------------------------------------------------------------
// Bad input: copies of real fixtures, truncated or with bytes overwritten.

class BadInput : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tracebed_trace_dat_test_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string copy(const std::string& fixture) {
    std::string to = (dir_ / (fixture + ".dat")).string();
    fs::copy_file(kDir + fixture + ".dat", to, fs::copy_options::overwrite_existing);
    return to;
  }
  static uint32_t peek_u32(const std::string& path, uint64_t offset) {
    std::ifstream f(path, std::ios::binary);
    f.seekg(offset);
    uint8_t b[4] = {};
    f.read(reinterpret_cast<char*>(b), 4);
    return load<uint32_t>(b, Endian::little);
  }
  static void poke(const std::string& path, uint64_t offset, std::vector<uint8_t> bytes) {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(offset);
    f.write(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  }
  static std::string open_error(const std::string& path) {
    auto dat = TraceDat::open(path);
    if (dat.ok()) return "(opened)";
    return strip(path, dat.error().message);
  }
  // The first error of events()/next(), and how many records came before it.
  static std::string strip(const std::string& path, const std::string& m) {
    return m.starts_with(path + ": ") ? m.substr(path.size() + 2) : "(no file name) " + m;
  }
  // `ahead`: decompress chunks ahead on a thread (unset: as the machine decides).
  // `visit`: read with for_each instead of next().
  static std::string stream_error(const std::string& path, size_t* records = nullptr,
                                  std::optional<bool> ahead = {}, bool visit = false) {
    auto dat = TraceDat::open(path);
    if (!dat.ok()) return "open: " + dat.error().message;
    (*dat)->set_decompress_ahead(ahead);
    auto stream = (*dat)->events();
    if (!stream.ok()) return strip(path, stream.error().message);
    size_t n = 0;
    if (visit) {
      Status st = (*stream)->for_each([&](const Record&) { return ++n > 0; });
      if (records) *records = n;
      return st.ok() ? "(no error)" : strip(path, st.error().message);
    }
    Record r;
    for (;;) {
      auto more = (*stream)->next(r);
      if (!more.ok()) {
        if (records) *records = n;
        return strip(path, more.error().message);
      }
      if (!*more) return "(no error)";
      ++n;
    }
  }

  fs::path dir_;
};

constexpr char kS1[] = "s1-k6.12-v7zstd-sched-irq-timer-syscalls";
constexpr char kS2[] = "s2-k6.1-v6-function-sched-kmem";
constexpr char kS3[] = "s3-k5.10-v7none-kprobes-marker";

TEST_F(BadInput, EmptyAndForeignFiles) {
  std::string empty = (dir_ / "empty.dat").string();
  std::ofstream(empty).close();
  EXPECT_EQ(open_error(empty), "offset 0x0: file header: 10 bytes exceed file size 0");
  std::string text = (dir_ / "text.dat").string();
  std::ofstream(text) << "hello, this is not a trace";
  EXPECT_EQ(open_error(text), "offset 0x0: not a trace.dat file: magic 68 65 6c, want 17 08 44");
  std::string v8 = copy(kS3);
  poke(v8, 10, {'8'});
  EXPECT_EQ(open_error(v8), "offset 0xa: unsupported trace.dat version \"8\" (this reader knows 6 and 7)");
  EXPECT_EQ(open_error((dir_ / "missing.dat").string()), "cannot open: No such file or directory");
}

TEST_F(BadInput, TruncatedV7) {
  std::string p = copy(kS1);
  fs::resize_file(p, 1340392);  // inside CPU 0's data, before the options holding BUFFER
  EXPECT_EQ(open_error(p), "offset 0x1c860c: section 0 header: 16 bytes exceed file size 1340392");
}

// A v6 file's metadata is read through a window read ahead; cut anywhere,
// the error must still name the read that failed, where it started, and
// how much it wanted past the end.
TEST_F(BadInput, V6CutAnywhereNamesTheReadThatFailed) {
  const std::string whole = kDir + std::string("s8-k6.1-v6-function_graph.dat");
  const uint64_t size = fs::file_size(whole);
  static const std::regex exceed(R"(^offset 0x([0-9a-f]+): (.+): (\d+) bytes exceed file size (\d+)( \(file truncated\?\))?$)");
  static const std::regex no_nul(R"(^offset 0x([0-9a-f]+): (.+): file ends before the string's terminating NUL$)");
  size_t exceeded = 0;
  for (uint64_t cut = 1; cut < size; cut += 4099) {
    SCOPED_TRACE(cut);
    const std::string p = (dir_ / "cut.dat").string();
    fs::copy_file(whole, p, fs::copy_options::overwrite_existing);
    fs::resize_file(p, cut);
    const std::string e = open_error(p);
    std::smatch m;
    if (std::regex_match(e, m, exceed)) {
      ++exceeded;
      const uint64_t at = std::stoull(m[1], nullptr, 16), wanted = std::stoull(m[3]);
      EXPECT_EQ(std::stoull(m[4]), cut) << e;
      // A CPU's data may be placed past the cut; every other read starts before it.
      if (!m[5].matched) {
        EXPECT_LE(at, cut) << e;
      }
      EXPECT_GT(at + wanted, cut) << e;
    } else if (std::regex_match(e, m, no_nul)) {
      EXPECT_LT(std::stoull(m[1], nullptr, 16), cut) << e;
    } else {
      // Counts checked against what is left ("... cannot fit in the N bytes left").
      EXPECT_TRUE(e.starts_with("offset 0x") && e.find("cannot fit in the") != std::string::npos) << e;
    }
  }
  EXPECT_GT(exceeded, 100u);
}

// A v7 kallsyms section corrupt halfway: the report prints what it can
// (addresses stay numbers) and then fails with the section's error, the
// same whether its lines are parsed behind the decompression on another
// thread or after it.
TEST_F(BadInput, KallsymsCorruptHalfwayFailsTheSameOnOneThreadOrTwo) {
  std::string p = copy(kS1);
  auto text = base::read_file(p);
  ASSERT_TRUE(text.ok()) << text.error().message;
  const std::vector<uint8_t> bytes(text->begin(), text->end());
  // The section: id 19, flags 1 (compressed), then a block whose data is a zstd frame.
  size_t at = 0;
  for (size_t i = 0; i + 32 < bytes.size() && !at; ++i)
    if (load<uint16_t>(&bytes[i], Endian::little) == 19 && load<uint16_t>(&bytes[i + 2], Endian::little) == 1 &&
        load<uint32_t>(&bytes[i + 24], Endian::little) == 0xFD2FB528u)
      at = i;
  ASSERT_NE(at, 0u) << "no compressed kallsyms section in " << kS1;
  const uint32_t zsize = load<uint32_t>(&bytes[at + 16], Endian::little);
  poke(p, at + 24 + zsize / 2, {0xde, 0xad, 0xbe, 0xef});
  std::vector<std::string> errors;
  for (bool threaded : {false, true}) {
    SCOPED_TRACE(threaded ? "parsed behind the decompression" : "parsed after it");
    auto dat = TraceDat::open(p);
    ASSERT_TRUE(dat.ok()) << dat.error().message;
    (*dat)->context().set_parse_kallsyms_while_loading(threaded);
    std::FILE* sink = std::fopen("/dev/null", "w");
    ASSERT_TRUE(sink);
    Status st = write_report(**dat, ReportOptions{}, sink);
    std::fclose(sink);
    ASSERT_FALSE(st.ok());
    errors.push_back(strip(p, st.error().message));
  }
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_NE(errors[0].find(fmt::format("offset {:#x}: section 19", at + 16)), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("zstd"), std::string::npos) << errors[0];
}

TEST_F(BadInput, TruncatedV6) {
  std::string p = copy(kS2);
  fs::resize_file(p, 4304896 + 100);  // CPU 1 starts at 4304896 with 716800 bytes
  EXPECT_EQ(open_error(p), "offset 0x41b000: cpu 1 data: 716800 bytes exceed file size 4304996 (file truncated?)");
}

TEST_F(BadInput, SectionSizeBeyondFile) {
  std::string p = copy(kS1);
  // Section 18 (event formats) at 2079: its compressed size is the u32 after the 16-byte header.
  poke(p, 2079 + 16, {0x28, 0x23, 0, 0x01});
  EXPECT_EQ(open_error(p), "offset 0x82f: section 18 compressed size 16786216 exceeds file size 1869540");
}

TEST_F(BadInput, CorruptCompressedChunk) {
  std::string p = copy(kS1);
  poke(p, 1339392 + 4 + 8, {0, 0, 0, 0});  // zstd magic of CPU 0's first chunk
  EXPECT_EQ(stream_error(p), "offset 0x147004: cpu 0 chunk 0: zstd: Unknown frame descriptor (8822 compressed "
                             "bytes, 40960 expected out)");
}

// A bad chunk well past the first, where the reading thread and the helper
// both decompress chunks: the same records come before the same error as
// when the reading thread decompresses them all.
TEST_F(BadInput, CorruptLaterChunkSameWithAndWithoutHelperThread) {
  std::string p = copy(kS1);
  uint64_t at = 1339392 + 4;  // CPU 0: u32 chunk count, then per chunk u32 compressed size, u32 size, data
  for (int i = 0; i < 9; ++i) at += 8 + peek_u32(p, at);
  const uint32_t zsize = peek_u32(p, at);
  poke(p, at + 8, {0, 0, 0, 0});  // zstd magic of chunk 9
  size_t here = 0, ahead = 0;
  const std::string want = fmt::format(
      "offset {:#x}: cpu 0 chunk 9: zstd: Unknown frame descriptor ({} compressed bytes, 40960 expected out)", at,
      zsize);
  EXPECT_EQ(stream_error(p, &here, false), want);
  EXPECT_EQ(stream_error(p, &ahead, true), want);
  EXPECT_GT(here, 0u);
  EXPECT_EQ(ahead, here);
  size_t visited = 0;
  EXPECT_EQ(stream_error(p, &visited, {}, true), want);
  EXPECT_EQ(visited, here) << "for_each visits the records next() returns before the error";
}

TEST_F(BadInput, CommitBeyondSubBuffer) {
  std::string p = copy(kS3);
  poke(p, 4173824 + 8, {0x88, 0x13});  // CPU 0, first page: commit 5000
  EXPECT_EQ(stream_error(p), "offset 0x3fb008: sub-buffer commit size 5000 exceeds the 4080 bytes after the header");
}

TEST_F(BadInput, EventLengthBeyondSubBuffer) {
  std::string p = copy(kS3);
  // CPU 1's second page, first event: make it type_len 0 with a huge array[0].
  const uint64_t page = 4210688 + 4096;
  poke(p, page + 16, {0x00, 0, 0, 0, 0xff, 0xff, 0, 0});
  size_t before = 0, visited = 0;
  const char want[] = "offset 0x405010: event length 65532 exceeds the 4044 bytes left in the sub-buffer's data";
  EXPECT_EQ(stream_error(p, &before), want);
  EXPECT_GT(before, 0u);
  EXPECT_EQ(stream_error(p, &visited, {}, true), want);
  EXPECT_EQ(visited, before);
}

TEST_F(BadInput, OptionChainLoop) {
  std::string p = copy(kS3);
  auto dat = TraceDat::open(p);
  ASSERT_TRUE(dat.ok());
  // The first options section's DONE points at the second; point it back at the first.
  // Its offset is in the header: 3+7+2+1+1+4 bytes, then "none\0" and "\0".
  std::ifstream in(p, std::ios::binary);
  in.seekg(24);
  uint64_t first = 0;
  in.read(reinterpret_cast<char*>(&first), 8);
  in.seekg(first + 8);
  uint64_t size = 0;
  in.read(reinterpret_cast<char*>(&size), 8);
  const uint64_t done_value = first + 16 + size - 8;
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<uint8_t>(first >> (8 * i));
  poke(p, done_value, b);
  EXPECT_EQ(open_error(p), fmt::format("offset {:#x}: options sections form a loop", first));
}

// fixtures/corrupt: what each file breaks is in fixtures/README.md; the
// offsets below were checked against `trace-cmd dump` of the edge/e11 files
// they were cut from (e.g. EVENT FORMATS @ 12303 = 0x300f, CPU 0 at 0x2000).
struct CorruptCase {
  const char* file;
  bool at_open;          // false: TraceDat::open succeeds, events()/next() fail
  const char* message;   // after "PATH: "
};

class CorruptFixture : public ::testing::TestWithParam<CorruptCase> {};

TEST_P(CorruptFixture, FailsWithTheExactMessage) {
  const CorruptCase& c = GetParam();
  const std::string path = kFixtures + "corrupt/" + c.file;
  ASSERT_TRUE(fs::exists(path)) << path;
  auto dat = TraceDat::open(path);
  std::string got;
  if (!dat.ok()) {
    EXPECT_TRUE(c.at_open) << dat.error().message;
    got = dat.error().message;
  } else {
    EXPECT_FALSE(c.at_open);
    auto stream = (*dat)->events();
    if (!stream.ok()) {
      got = stream.error().message;
    } else {
      Record r;
      for (size_t guard = 0; guard < 10000000; ++guard) {
        auto more = (*stream)->next(r);
        if (!more.ok()) {
          got = more.error().message;
          break;
        }
        if (!*more) break;
      }
    }
  }
  EXPECT_EQ(got, path + ": " + c.message);
}

INSTANTIATE_TEST_SUITE_P(
    Corrupt, CorruptFixture,
    ::testing::Values(
        CorruptCase{"empty.dat", true, "offset 0x0: file header: 10 bytes exceed file size 0"},
        CorruptCase{"truncated-header.dat", true,
                    "offset 0x12: compression name: file ends before the string's terminating NUL"},
        CorruptCase{"truncated-v7none.dat", true,
                    "offset 0x2b000: section 0 header: 16 bytes exceed file size 105810"},
        CorruptCase{"truncated-v6.dat", true,
                    "offset 0xa000: cpu 0 data: 118784 bytes exceed file size 88064 (file truncated?)"},
        CorruptCase{"bad-magic.dat", true, "offset 0x0: not a trace.dat file: magic 18 08 44, want 17 08 44"},
        CorruptCase{"bad-version.dat", true,
                    "offset 0xa: unsupported trace.dat version \"9\" (this reader knows 6 and 7)"},
        CorruptCase{"bad-section-size-v7none.dat", true,
                    "offset 0x300f: section 18 size 2147483392 exceeds file size 176351"},
        CorruptCase{"bad-options-offset-v7none.dat", true,
                    "offset 0x2c0df: section 0 header: 16 bytes exceed file size 176351"},
        CorruptCase{"options-loop-v7none.dat", true, "offset 0x2b000: options sections form a loop"},
        CorruptCase{"bad-chunk-data-v7zstd.dat", false,
                    "offset 0x2004: cpu 0 chunk 0: zstd: Data corruption detected (6963 compressed bytes, 40960 "
                    "expected out)"},
        CorruptCase{"bad-chunk-size-v7zstd.dat", true,
                    "offset 0x2004: cpu 0 chunk 0: compressed size 1073741824 exceeds the 19965 bytes left in the "
                    "cpu's data"},
        CorruptCase{"bad-section-block-v7zstd.dat", true,
                    "offset 0x35: section 16: zstd: Unsupported frame parameter (253 compressed bytes, 451 expected "
                    "out)"},
        CorruptCase{"bad-page-v7none.dat", false,
                    "offset 0xa008: sub-buffer commit size 8000 exceeds the 4080 bytes after the header"},
        CorruptCase{"foreign-png.dat", true, "offset 0x0: not a trace.dat file: magic 89 50 4e, want 17 08 44"},
        CorruptCase{"foreign-elf.dat", true, "offset 0x0: not a trace.dat file: magic 7f 45 4c, want 17 08 44"}),
    [](const auto& info) {
      const std::string file = info.param.file;
      return test_name(file.substr(0, file.find('.')));
    });

}  // namespace
}  // namespace tracebed::decode
