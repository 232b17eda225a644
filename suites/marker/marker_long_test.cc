// Markers longer than an event can be (trace_marker.tc), at every
// sub-buffer size (ringbuffer_subbuf_size.tc), and raw markers' size
// limits (trace_marker_raw.tc). A long write is cut at the largest event
// the sub-buffer holds and returns short; the writer (echo, or the guest
// side of FileOps::write) writes the rest: no byte may be lost or reordered.
#include <algorithm>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/text.h"
#include "framework/decode/event_format.h"
#include "framework/testing/tracefs_fixture.h"

namespace tracebed::suites {
namespace {

class LongMarker : public TracefsTest {
 protected:
  // A text whose bytes say where they are, so a lost or moved piece shows.
  static std::string pattern(size_t n) {
    std::string s(n, ' ');
    for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
    return s;
  }
  // One write of `text`: the kernel cuts it into two or more print events
  // which, without the newline it adds to each, are the text again, in
  // the pages and in `trace`.
  void ExpectSplitButWhole(const std::string& text) {
    ASSERT_OK(inst().clear_trace());
    ASSERT_OK(inst().set_tracing_on(true));
    ASSERT_OK(inst().write_marker(text));
    ASSERT_OK(inst().set_tracing_on(false));
    std::string from_text;
    for (const std::string& l : trace_lines(inst())) {
      size_t at = l.find("tracing_mark_write: ");
      if (at != std::string::npos) from_text += l.substr(at + 20);
    }
    auto prints = decoded_only({"ftrace", "print"});
    ASSERT_GE(prints.size(), 2u) << "a " << text.size() << "-byte marker was not cut";
    std::string joined;
    for (const DecodedEvent& e : prints) {
      std::string buf = str_field(e, "buf");
      EXPECT_THAT(buf, EndsWith("\n"));
      if (!buf.empty() && buf.back() == '\n') buf.pop_back();
      EXPECT_LT(buf.size(), text.size());
      joined += buf;
    }
    EXPECT_EQ(joined.size(), text.size());
    EXPECT_TRUE(joined == text) << "the pieces are not the text in order";
    EXPECT_TRUE(from_text == text) << "trace's pieces are not the text in order";
  }
};

TEST_F(LongMarker, MarkerLongerThanASubBufferIsCutButKeptWhole) {
  TRACEBED_COVERS("ftracetest: 00basic/trace_marker.tc");
  // trace_marker.tc: the sub-buffer's data size less the "\n\0" the kernel adds.
  ExpectSplitButWhole(pattern(header_page().data_size - 2));
}

TEST_F(LongMarker, EverySubBufferSizeHoldsWhatItSays) {
  TRACEBED_COVERS("ftracetest: 00basic/ringbuffer_subbuf_size.tc");
  TRACEBED_REQUIRE(features::subbuf_size);
  for (uint32_t kb : {4u, 8u, 16u, 32u}) {
    SCOPED_TRACE(::testing::Message() << kb << " KiB sub-buffers");
    ASSERT_OK(inst().set_subbuf_size_kb(kb));
    EXPECT_EQ(inst().subbuf_size_kb().value(), kb);
    decode::HeaderPage page = header_page();
    EXPECT_GE(page.data_size, kb * 1024 - page.data_offset);
    EXPECT_EQ(inst().raw_page_size().value(), kb * 1024);
    ExpectSplitButWhole(pattern(page.data_size));
  }
}

// The raw bytes of a trace_marker_raw write: the id, then n 'X'.
std::string raw_write(uint32_t id, size_t n) {
  std::string s(reinterpret_cast<const char*>(&id), 4);
  return s + std::string(n, 'X');
}

TEST_F(LongMarker, RawMarkerIsAllOrNothing) {
  TRACEBED_COVERS("ftracetest: 00basic/trace_marker_raw.tc");
  TRACEBED_REQUIRE(features::trace_marker_raw);
  ASSERT_OK(inst().set_buffer_size_kb(16));  // the case needs 12 KiB
  EXPECT_EQ(inst().files().try_write("trace_marker_raw", "abc").value(), EINVAL) << "shorter than an id";
  EXPECT_EQ(inst().files().try_write("trace_marker_raw", raw_write(0xdeadbeef, header_page().data_size)).value(),
            EINVAL)
      << "more than a sub-buffer holds";
  EXPECT_THAT(trace_lines(inst()), IsEmpty()) << "a refused write left a record";

  std::vector<uint32_t> ids;
  for (uint32_t base : {1u, 101u, 1001u})
    for (uint32_t i = base; i < base + 10; ++i) ids.push_back(i);
  for (uint32_t id : ids) ASSERT_OK(inst().files().write("trace_marker_raw", raw_write(id, id)));
  ASSERT_OK(inst().set_tracing_on(false));
  // kernel/trace/trace_output.c trace_raw_data: "# <id> buf: xx xx ...",
  // the record's bytes after the id, rounded up to 4.
  auto lines = trace_lines(inst());
  ASSERT_THAT(lines, SizeIs(ids.size()));
  for (size_t k = 0; k < ids.size(); ++k) {
    SCOPED_TRACE(ids[k]);
    std::string head = fmt::format("# {:x} buf:", ids[k]);
    size_t at = lines[k].find(head);
    ASSERT_NE(at, std::string::npos) << lines[k];
    auto bytes = base::split_words(std::string_view(lines[k]).substr(at + head.size()));
    // 7.2 reserves the id and the bytes. Older kernels reserved the
    // 12-byte raw_data_entry plus the whole write (the id counted twice),
    // at least FAULT_SIZE_ID (room for "<faulted>").
    const size_t n = ids[k];
    const size_t now = (n + 3) / 4 * 4, before = (16 + std::max<size_t>(n, 10) + 3) / 4 * 4 - 12;
    EXPECT_THAT(bytes.size(), AnyOf(now, before));
    EXPECT_EQ(std::count(bytes.begin(), bytes.end(), "58"), ids[k]);
  }
  std::vector<int64_t> want(ids.begin(), ids.end());
  EXPECT_THAT(int_fields(decoded_only({"ftrace", "raw_data"}), "id"), ElementsAreArray(want));
}

}  // namespace
}  // namespace tracebed::suites
