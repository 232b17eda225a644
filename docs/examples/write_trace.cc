// Example from docs/trace_dat_writer.md: write a two-event trace.dat from the
// real 6.12 tracefs files in fixtures/edge/inputs/k6.12; CTest checks that
// Debian's `trace-cmd report` prints it as docs/examples/write_trace.expected.
//   write_trace INPUTS_DIR OUT.dat
#include <cstdio>
#include <fstream>
#include <iterator>
#include <string>

#include "framework/decode/page_writer.h"
#include "framework/decode/trace_dat_writer.h"

static std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// A trace_marker `print` event as ftrace/print's format lays it out:
// common_type (u16) at 0, common_pid (s32) at 4, ip (u64) at 8, buf at 16.
static std::vector<uint8_t> marker(int pid, uint64_t ip, const std::string& text) {
  std::vector<uint8_t> p(16, 0);
  p[0] = 5;                                              // ID: 5
  for (int i = 0; i < 4; ++i) p[4 + i] = static_cast<uint8_t>(pid >> (8 * i));
  for (int i = 0; i < 8; ++i) p[8 + i] = static_cast<uint8_t>(ip >> (8 * i));
  p.insert(p.end(), text.begin(), text.end());
  p.push_back(0);
  return p;
}

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: write_trace INPUTS_DIR OUT.dat\n");
    return 2;
  }
  std::string in = argv[1];
  tracebed::decode::TraceDatContents c;
  c.header_page = slurp(in + "/header_page");
  c.header_event = slurp(in + "/header_event");
  c.ftrace_formats.push_back(slurp(in + "/ftrace/print.format"));
  c.kallsyms = slurp(in + "/kallsyms");   // has tracing_mark_write at 0xffffffff9901b910
  c.cmdlines = "150 sh\n";
  c.cpu_count = 1;

  // One CPU's ring buffer: 4 KiB sub-buffers, 8-byte commit (64-bit kernel).
  tracebed::decode::CpuBufferWriter cpu({tracebed::Endian::little, 8, 4096});
  const uint64_t ip = 0xffffffff9901b910;
  if (!cpu.add(1'000'000'000, marker(150, ip, "hello\n")).ok() ||
      !cpu.add(3'000'000'000, marker(150, ip, "two seconds later: a time extend\n")).ok()) {
    std::fprintf(stderr, "event does not fit\n");
    return 1;
  }
  tracebed::decode::TraceDatBufferData top;   // the top-level buffer
  top.cpus.push_back({0, cpu.finish()});
  c.buffers.push_back(std::move(top));

  tracebed::decode::TraceDatWriteOptions options;
  options.version = 7;
  options.compression = tracebed::decode::TraceDatCompression::zstd;
  tracebed::Status written = tracebed::decode::write_trace_dat_file(argv[2], c, options);
  if (!written.ok()) {
    std::fprintf(stderr, "%s\n", written.error().message.c_str());
    return 1;
  }
  return 0;
}
