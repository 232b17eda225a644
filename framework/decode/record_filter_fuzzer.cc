// libFuzzer target: the input as a `report -F` filter on a recorded file's
// formats, then matched against its first records.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "framework/decode/record_filter.h"
#include "framework/decode/trace_dat.h"

namespace {

struct Fixture {
  std::unique_ptr<tracebed::decode::TraceDat> file;
  std::vector<std::vector<uint8_t>> bytes;
  std::vector<tracebed::decode::Record> records;
};

const Fixture& fixture() {
  static Fixture f = [] {
    Fixture x;
    auto file = tracebed::decode::TraceDat::open(std::string(TRACEBED_SOURCE_DIR) +
                                                 "/fixtures/recorded/s1-k6.12-v7zstd-sched-irq-timer-syscalls.dat");
    if (!file.ok()) return x;
    x.file = std::move(file).value();
    auto stream = x.file->events();
    tracebed::decode::Record r;
    for (;;) {
      if (!stream.ok() || x.records.size() >= 200) break;
      auto more = (*stream)->next(r);
      if (!more.ok() || !*more) break;
      x.bytes.emplace_back(r.data.begin(), r.data.end());
      x.records.push_back(r);
    }
    for (size_t i = 0; i < x.records.size(); ++i) x.records[i].data = tracebed::Bytes(x.bytes[i]);
    return x;
  }();
  return f;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const Fixture& f = fixture();
  if (!f.file || size == 0) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto& ctx = f.file->context();
  auto filter = tracebed::decode::RecordFilter::make(ctx, {{text, (data[0] & 1) != 0}});
  if (!filter.ok()) return 0;
  for (const auto& r : f.records) (*filter)->keep(r, ctx.event_of(r.data));
  return 0;
}
