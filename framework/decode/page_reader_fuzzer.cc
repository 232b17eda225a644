// libFuzzer target: one ring-buffer sub-buffer through PageReader.
// The first input byte picks the layout (endian, 4- or 8-byte commit), the
// rest is the sub-buffer as the kernel would have written it.
#include <cstdint>

#include "framework/decode/page_reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  tracebed::decode::PageLayout layout;
  layout.endian = (data[0] & 1) ? tracebed::Endian::big : tracebed::Endian::little;
  layout.long_size = (data[0] & 2) ? 4 : 8;
  tracebed::decode::PageReader reader;
  if (!reader.load(tracebed::Bytes(data + 1, size - 1), layout).ok()) return 0;
  tracebed::decode::PageEvent event;
  uint64_t sum = 0;
  while (reader.next(event) == tracebed::decode::PageStep::event) {
    // Touch every payload byte so ASan checks the bounds we returned.
    for (uint8_t b : event.payload) sum += b;
  }
  return static_cast<int>(sum & 0);
}
