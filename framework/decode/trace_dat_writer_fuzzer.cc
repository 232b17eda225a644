// libFuzzer target: a whole file through read_trace_dat_contents, and when
// it reads, through the writer and back: what was read must survive.
#include <cstdint>

#include "framework/decode/trace_dat_writer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  tracebed::decode::TraceDatWriteOptions format;
  // A memory limit well under libFuzzer's RSS limit: the file is read,
  // written and read again, all in memory.
  auto contents = tracebed::decode::read_trace_dat_contents(tracebed::Bytes(data, size), &format, uint64_t{256} << 20);
  if (!contents.ok()) return 0;
  format.compression_version.clear();
  auto written = tracebed::decode::write_trace_dat(*contents, format);
  if (!written.ok()) return 0;   // e.g. CPU data that is not whole sub-buffers
  auto again = tracebed::decode::read_trace_dat_contents(*written);
  if (!again.ok() || again->header_page != contents->header_page ||
      again->kallsyms != contents->kallsyms || again->buffers.size() != contents->buffers.size())
    __builtin_trap();
  for (size_t b = 0; b < again->buffers.size(); ++b) {
    size_t n = 0;
    for (const auto& cpu : contents->buffers[b].cpus) n += cpu.pages.empty() ? 0 : 1;
    if (format.version == 7 && again->buffers[b].cpus.size() != n) __builtin_trap();
  }
  return 0;
}
