// user_events through perf: perf_event_open(PERF_TYPE_TRACEPOINT) on a user
// event's id is a second way to consume it (selftests/user_events/perf_test.c).
// The producer opens the perf ring, writes, and prints each sample's raw
// data; the host reads the fields out of it at the offsets the event's own
// format file gives and compares them with what was written.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/base/bytes.h"
#include "framework/decode/event_format.h"
#include "suites/user_events/producer.h"
#include "suites/user_events/user_events_fixture.h"

namespace tracebed::suites {
namespace {

class UserEventsPerf : public UserEvents {
 protected:
  void SetUp() override {
    UserEvents::SetUp();
    if (IsSkipped()) return;
    // perf_event_open is ENOSYS without CONFIG_PERF_EVENTS.
    if (!fs().ops().exists("/proc/sys/kernel/perf_event_paranoid"))
      GTEST_SKIP() << "needs perf events: no /proc/sys/kernel/perf_event_paranoid (CONFIG_PERF_EVENTS)";
  }

  // The event's format as the kernel states it, for the offsets of its fields.
  std::unique_ptr<decode::EventFormat> format(const std::string& name) {
    auto text = fs().ops().read(event_dir(name) + "/format");
    EXPECT_OK(text);
    if (!text.ok()) return nullptr;
    auto f = decode::parse_event_format(*text, tracefs::kUserEventsSystem, name);
    EXPECT_OK(f);
    return f.ok() ? std::move(*f) : nullptr;
  }

  // Registers def, attaches perf (the bit is checked clear before and set
  // after), runs `writes`, reads the samples, detaches and checks the bit
  // goes clear again. Returns the raw data of every sample.
  std::vector<std::string> perf_samples(const UserEventDef& def, const std::vector<std::string>& writes,
                                        ProducerRun* run) {
    std::vector<std::string> script = {reg("r", def), "bit w0", "perfopen r 64", "bit w0"};
    script.insert(script.end(), writes.begin(), writes.end());
    script.insert(script.end(), {"perfread r", "perfclose r", "waitbit w0 31 0 10000"});
    *run = run_producer(script);
    EXPECT_TRUE(run->get("reg", "r").ok()) << run->text;
    EXPECT_TRUE(run->get("perfopen", "r").ok()) << run->text;
    EXPECT_EQ(run->get("bit", "w0", 0).value("value"), "0x0") << "enabled before anything attached";
    EXPECT_EQ(run->get("bit", "w0", 1).value("value"), "0x80000000") << "perf attached but the bit is clear";
    EXPECT_TRUE(run->get("waitbit", "w0").ok()) << "the bit stayed set after perf closed";
    ProducerLine read = run->get("perfread", "r");
    EXPECT_EQ(read.value("other"), "0") << "perf lost records or reported others: " << read.line;
    std::vector<std::string> raws;
    for (const auto& l : run->all("sample")) raws.push_back(unhex(l.value("raw")));
    return raws;
  }
};

TEST_F(UserEventsPerf, PerfSampleRawDataIsWhatWasWritten) {
  TRACEBED_COVERS("user_events: perf_test.c/perf_write");
  // perf_test.c perf_write reads two u32 fields at the format's offset;
  // here fields of every size, across their range, and the common header.
  UserEventDef def(unique("perf"));
  def.u32("seq").u32("field1").u32("field2").u64("wide").s16("narrow").u8("byte");
  std::mt19937_64 rng(20261127);
  constexpr int kWrites = 1000;
  std::vector<std::vector<uint64_t>> written;
  std::vector<std::string> writes;
  for (int n = 0; n < kWrites; ++n) {
    uint64_t f1 = n == 0 ? 0xc001 : n == 1 ? 0xffffffff : rng() & 0xffffffff;
    uint64_t f2 = n == 0 ? 0xc01a : n == 1 ? 0 : rng() & 0xffffffff;
    uint64_t wide = n == 1 ? ~uint64_t{0} : n == 2 ? uint64_t{1} << 63 : rng();
    int64_t narrow = n == 1 ? -32768 : n == 2 ? 32767 : static_cast<int16_t>(rng());
    uint64_t byte = rng() & 0xff;
    written.push_back({static_cast<uint64_t>(n), f1, f2, wide, static_cast<uint64_t>(narrow), byte});
    writes.push_back(fmt::format("write r {} {} {} {} {} {}", n, f1, f2, wide, narrow, byte));
  }
  ProducerRun run;
  std::vector<std::string> raws = perf_samples(def, writes, &run);
  EXPECT_EQ(run.count("write", "r", "ok"), size_t{kWrites}) << run.text;
  auto fmt_ = format(def.name());
  ASSERT_NE(fmt_, nullptr);
  ASSERT_THAT(raws, SizeIs(kWrites)) << "one perf sample per write";
  const std::vector<std::string> names = {"seq", "field1", "field2", "wide", "narrow", "byte"};
  for (int n = 0; n < kWrites; ++n) {
    SCOPED_TRACE(fmt::format("sample {}: {}", n, hex(raws[n])));
    Bytes rec(reinterpret_cast<const uint8_t*>(raws[n].data()), raws[n].size());
    EXPECT_EQ(fmt_->field("common_type")->read_uint(rec, Endian::little), fmt_->id);
    EXPECT_EQ(fmt_->field("common_pid")->read_int(rec, Endian::little), run.pid);
    for (size_t i = 0; i < names.size(); ++i) {
      const decode::Field* f = fmt_->field(names[i]);
      ASSERT_NE(f, nullptr) << names[i];
      ASSERT_LE(f->offset + f->size, rec.size()) << names[i] << " beyond the sample";
      uint64_t mask = f->size == 8 ? ~uint64_t{0} : (uint64_t{1} << (8 * f->size)) - 1;
      EXPECT_EQ(f->read_uint(rec, Endian::little), written[n][i] & mask) << names[i];
    }
  }
}

TEST_F(UserEventsPerf, EventWithoutFieldsRecordsThroughPerf) {
  TRACEBED_COVERS("user_events: perf_test.c/perf_empty_events");
  // perf_test.c perf_empty_events: the write index alone makes a sample.
  UserEventDef def(unique("perfempty"));
  constexpr int kWrites = 300;
  ProducerRun run;
  std::vector<std::string> raws = perf_samples(def, std::vector<std::string>(kWrites, "write r"), &run);
  EXPECT_EQ(run.count("write", "r", "ok"), size_t{kWrites}) << run.text;
  auto fmt_ = format(def.name());
  ASSERT_NE(fmt_, nullptr);
  EXPECT_EQ(fmt_->fields.size(), fmt_->common_count) << "an event without fields has only the common ones";
  ASSERT_THAT(raws, SizeIs(kWrites)) << "one perf sample per write";
  for (const auto& raw : raws) {
    SCOPED_TRACE(hex(raw));
    Bytes rec(reinterpret_cast<const uint8_t*>(raw.data()), raw.size());
    // The raw data is the common header, padded so the sample stays u64
    // aligned (kernel/trace/trace_event_perf.c): never a payload's worth.
    const decode::Field& last = fmt_->fields[fmt_->common_count - 1];
    EXPECT_GE(rec.size(), last.offset + last.size);
    EXPECT_LT(rec.size(), last.offset + last.size + 8);
    EXPECT_EQ(fmt_->field("common_type")->read_uint(rec, Endian::little), fmt_->id);
    EXPECT_EQ(fmt_->field("common_pid")->read_int(rec, Endian::little), run.pid);
  }
}

}  // namespace
}  // namespace tracebed::suites
