// make_bench_trace IN OUT COPIES [FORMAT]: a large trace.dat for the
// benchmarks in docs/performance.md, built from a recorded one: the same
// format files, kallsyms and comms, and every CPU's sub-buffers repeated
// COPIES times, each copy's page stamps moved past the previous copy so time
// keeps going forward on every CPU and the cross-CPU order inside a copy is
// the recorded one. FORMAT is v6, v7none, v7zlib or v7zstd (default: as IN).
// The whole file is built in memory (about twice its size).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <algorithm>

#include "framework/base/bytes.h"
#include "framework/decode/trace_dat_writer.h"

using namespace tracebed;
using namespace tracebed::decode;

namespace {

[[noreturn]] void die(const std::string& message) {
  std::fprintf(stderr, "make_bench_trace: %s\n", message.c_str());
  std::exit(1);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s IN OUT COPIES [v6|v7none|v7zlib|v7zstd]\n", argv[0]);
    return 2;
  }
  TraceDatWriteOptions format;
  auto contents = read_trace_dat_contents_file(argv[1], &format);
  if (!contents.ok()) die(contents.error().message);
  const long copies = std::strtol(argv[3], nullptr, 10);
  if (copies < 1 || copies > 100000) die("COPIES must be 1..100000");
  if (argc == 5) {
    const std::string f = argv[4];
    if (f == "v6") {
      format.version = 6;
      format.compression = TraceDatCompression::none;
    } else if (f == "v7none" || f == "v7zlib" || f == "v7zstd") {
      format.version = 7;
      format.compression = f == "v7none"   ? TraceDatCompression::none
                           : f == "v7zlib" ? TraceDatCompression::zlib
                                           : TraceDatCompression::zstd;
    } else {
      die("FORMAT must be v6, v7none, v7zlib or v7zstd");
    }
  }

  // Each sub-buffer starts with its u64 stamp (include/linux/ring_buffer.h);
  // copy k adds k * span to it, span being the recorded stamps' range plus 1 ms.
  const Endian endian = contents->endian;
  for (TraceDatBufferData& buffer : contents->buffers) {
    const uint32_t page = buffer.page_size ? buffer.page_size : contents->page_size;
    uint64_t lo = ~uint64_t{0}, hi = 0;
    for (const TraceDatCpuData& cpu : buffer.cpus)
      for (size_t off = 0; off + 8 <= cpu.pages.size(); off += page) {
        const uint64_t ts = load<uint64_t>(cpu.pages.data() + off, endian);
        lo = std::min(lo, ts);
        hi = std::max(hi, ts);
      }
    if (lo > hi) continue;
    // The last page's events run past its stamp; a second is ample.
    const uint64_t span = hi - lo + 1'000'000'000ull;
    for (TraceDatCpuData& cpu : buffer.cpus) {
      const std::vector<uint8_t> one = cpu.pages;
      const size_t whole = one.size() / page * page;  // a partial last page is left out
      cpu.pages.reserve(whole * static_cast<size_t>(copies));
      cpu.pages.assign(one.begin(), one.begin() + static_cast<ptrdiff_t>(whole));
      for (long k = 1; k < copies; ++k) {
        const size_t at = cpu.pages.size();
        cpu.pages.insert(cpu.pages.end(), one.begin(), one.begin() + static_cast<ptrdiff_t>(whole));
        for (size_t off = at; off + 8 <= cpu.pages.size(); off += page) {
          const uint64_t ts = load<uint64_t>(cpu.pages.data() + off, endian) + span * static_cast<uint64_t>(k);
          const uint64_t v = endian == host_endian() ? ts : byteswap(ts);
          std::memcpy(cpu.pages.data() + off, &v, 8);
        }
      }
    }
  }
  Status st = write_trace_dat_file(argv[2], *contents, format);
  if (!st.ok()) die(st.error().message);
  return 0;
}
