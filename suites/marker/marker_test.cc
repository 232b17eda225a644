// trace_marker becomes an ftrace:print event with the exact text;
// trace_marker_raw an ftrace:raw_data event with the id and the bytes.
#include <cstring>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

using Marker = TracefsTest;

std::string all_raw_pages(const tracefs::Instance& inst) {
  std::string all;
  auto cpus = inst.cpus();
  EXPECT_OK(cpus);
  if (!cpus) return all;
  for (int cpu : *cpus) {
    auto pages = inst.read_raw_pages(cpu);
    EXPECT_OK(pages);
    if (pages) all += *pages;
  }
  return all;
}

TEST_F(Marker, TextComesBackExactlyAsPrint) {
  const std::string text = "tracebed marker: 42 \"quoted\" and\ttab";
  ASSERT_OK(inst().write_marker(text));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(1));
  // The kernel appends a newline when the write has none.
  EXPECT_THAT(lines[0], EndsWith("tracing_mark_write: " + text));
}

TEST_F(Marker, EachWriteIsOneEvent) {
  for (int i = 0; i < 5; ++i) ASSERT_OK(inst().write_marker(fmt::format("tracebed-{}", i)));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(5));
  for (int i = 0; i < 5; ++i) EXPECT_THAT(lines[i], EndsWith(fmt::format("tracing_mark_write: tracebed-{}", i)));
}

TEST_F(Marker, TextIsInTheRawPages) {
  ASSERT_OK(inst().write_marker("tracebed-in-raw-pages"));
  EXPECT_NE(all_raw_pages(inst()).find("tracebed-in-raw-pages"), std::string::npos);
}

TEST_F(Marker, RawMarkerCarriesIdAndBytes) {
  TRACEBED_REQUIRE(features::trace_marker_raw);
  std::vector<uint8_t> payload{0xde, 0xad, 0xbe, 0xef, 0x00, 0x01};
  ASSERT_OK(inst().write_marker_raw(0x7261626b, payload));
  std::string expect(4 + payload.size(), '\0');
  uint32_t id = 0x7261626b;
  std::memcpy(expect.data(), &id, 4);
  std::memcpy(expect.data() + 4, payload.data(), payload.size());
  EXPECT_NE(all_raw_pages(inst()).find(expect), std::string::npos);
}

TEST_F(Marker, RawMarkerShowsInTraceAsRawData) {
  TRACEBED_REQUIRE(features::trace_marker_raw);
  ASSERT_OK(inst().write_marker_raw(0x1234, std::vector<uint8_t>{0x0a, 0x0b}));
  // kernel/trace/trace_output.c trace_raw_data: "# %x buf: %02x ...".
  EXPECT_THAT(trace_lines(inst()), Contains(HasSubstr("# 1234 buf: 0a 0b")));
}

TEST_F(Marker, RawMarkerShorterThanAnIdIsRejected) {
  TRACEBED_REQUIRE(features::trace_marker_raw);
  auto err = inst().files().try_write("trace_marker_raw", "ab");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
}

TEST_F(Marker, MarkersOffByOptionAreDropped) {
  ASSERT_OK(inst().set_option("markers", false));
  auto err = inst().files().try_write("trace_marker", "tracebed-dropped");
  ASSERT_OK(err);
  EXPECT_EQ(*err, EINVAL);
  EXPECT_THAT(trace_lines(inst()), ElementsAre());
}

// Honesty check: the same window, decoded from the raw pages on the host
// and printed by the kernel in `trace`, has the same markers in the same
// order; each is an ftrace:print event whose buf is the text plus the
// newline the kernel adds.
TEST_F(Marker, DecodedPagesAgreeWithTheKernelsText) {
  std::vector<std::string> texts;
  for (int i = 0; i < 5; ++i) {
    texts.push_back(fmt::format("tracebed-honesty-{}", i));
    ASSERT_OK(inst().write_marker(texts.back()));
  }
  ASSERT_OK(inst().set_tracing_on(false));
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(texts.size()));
  std::vector<::testing::Matcher<const DecodedEvent&>> prints;
  for (size_t i = 0; i < texts.size(); ++i) {
    EXPECT_THAT(lines[i], EndsWith("tracing_mark_write: " + texts[i]));
    prints.push_back(HasEvent("ftrace/print", FieldEq("buf", texts[i] + "\n")));
  }
  EXPECT_THAT(decoded_only({"ftrace", "print"}), ElementsAreArray(prints));
}

}  // namespace
}  // namespace tracebed::suites
