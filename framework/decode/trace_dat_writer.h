// Writes trace-cmd's trace.dat, version 6 or 7 (trace-cmd.dat.v6.5 and
// trace-cmd.dat.v7.5), from real inputs: the tracefs metadata files and
// per-CPU ring-buffer sub-buffers. Version 7 may compress its sections and
// CPU data with zlib or zstd, as trace-cmd does.
//
// The layout is trace-cmd 3.1.6's: rewriting any of fixtures/recorded in its
// own version and compression reproduces the file byte for byte, and Debian's
// `trace-cmd report` reads every file this produces (zlib excepted: Debian's
// build links only libzstd):
//   v6: header, metadata in fixed order, CPU count, "options  " + options +
//       u16 0, "flyrecord" + per-CPU (offset, size), the trace clock text,
//       then page-aligned CPU data.
//   v7: header + compression name/version + offset of the first options
//       section; sections (16-byte header: u16 id, u16 flags, u32 string id,
//       u64 size) for headers, ftrace events, event formats, kallsyms,
//       printk, cmdlines, options, one flyrecord section per buffer, a second
//       options section with the BUFFER options, and the strings section.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/bytes.h"
#include "framework/base/result.h"

namespace tracebed::decode {

// The first bytes of every trace.dat (before "tracing"), and the flag of a
// compressed v7 section (TRACECMD_SEC_FL_COMPRESS).
inline constexpr uint8_t kTraceDatMagic[] = {0x17, 0x08, 0x44};
inline constexpr uint16_t kTraceDatSectionCompressed = 1;

// Option ids (trace-cmd.dat.v7.5, OPTIONS SECTION).
enum class TraceDatOptionId : uint16_t {
  done = 0,
  date = 1,
  cpustat = 2,
  buffer = 3,
  traceclock = 4,
  uname = 5,
  hook = 6,
  offset = 7,
  cpucount = 8,
  version = 9,
  procmaps = 10,
  traceid = 11,
  time_shift = 12,
  guest = 13,
  tsc2nsec = 14,
  strings = 15,
  header_info = 16,
  ftrace_events = 17,
  event_formats = 18,
  kallsyms = 19,
  printk = 20,
  cmdlines = 21,
  buffer_text = 22,
};

enum class TraceDatCompression { none, zlib, zstd };
std::string_view compression_name(TraceDatCompression c);

struct TraceDatOption {
  uint16_t id = 0;
  std::vector<uint8_t> data;   // already in the file's byte order

  // A NUL-terminated text option (UNAME, VERSION, TRACECLOCK, CPUSTAT...).
  static TraceDatOption text(TraceDatOptionId id, std::string_view s);
};

struct TraceDatEventSystem {
  std::string name;
  std::vector<std::string> formats;   // events/<system>/<event>/format texts
};

struct TraceDatCpuData {
  int cpu = 0;
  std::vector<uint8_t> pages;   // whole sub-buffers, concatenated
};

struct TraceDatBufferData {
  std::string name;             // "" for the top-level buffer
  std::string clock = "local";  // v7 BUFFER option clock
  uint32_t page_size = 0;       // sub-buffer size; 0 = the file's page size
  // CPUs with data. v7 lists only CPUs with bytes (ids may be sparse);
  // v6 writes one (offset, size) pair per CPU up to the file's CPU count.
  std::vector<TraceDatCpuData> cpus;
};

// Everything a trace.dat holds. Texts are stored as given (trace-cmd copies
// the tracefs files byte for byte).
struct TraceDatContents {
  Endian endian = Endian::little;
  uint8_t long_size = 8;        // user space's long, in the file header
  uint32_t page_size = 4096;    // the top-level buffer's sub-buffer size
  std::string header_page;      // events/header_page
  std::string header_event;     // events/header_event
  std::vector<std::string> ftrace_formats;      // events/ftrace/*/format
  std::vector<TraceDatEventSystem> systems;     // the other systems
  std::string kallsyms;         // /proc/kallsyms
  std::string printk_formats;   // printk_formats
  std::string cmdlines;         // saved_cmdlines
  uint32_t cpu_count = 1;       // v6 header count / v7 CPUCOUNT option
  // Options other than those the writer derives itself (DONE, BUFFER,
  // CPUCOUNT in v7, and v7's section references), in file order.
  std::vector<TraceDatOption> options;
  std::vector<TraceDatBufferData> buffers;   // [0] is the top level
  // v6 writes the trace_clock file after the CPU table; empty = "[<clock>]"
  // from buffers[0].
  std::string v6_trace_clock;
};

struct TraceDatWriteOptions {
  int version = 7;                                  // 6 or 7
  TraceDatCompression compression = TraceDatCompression::none;  // v7 only
  std::string compression_version;   // empty = the linked library's version
  uint32_t pages_per_chunk = 10;     // trace-cmd's chunk size
  int level = 0;                     // 0 = trace-cmd's (zstd 3, zlib 9)
  bool compress_options = false;     // trace-cmd leaves options uncompressed
};

// The whole file in memory (fixtures and tests are small).
Result<std::vector<uint8_t>> write_trace_dat(const TraceDatContents& contents,
                                             const TraceDatWriteOptions& options);
Status write_trace_dat_file(const std::string& path, const TraceDatContents& contents,
                            const TraceDatWriteOptions& options);

// Reads back what write_trace_dat() stores, and what trace-cmd writes:
// metadata texts, options and raw sub-buffers, with v7 sections and chunks
// decompressed. For rewriting files (round trips, fixtures), not for decoding
// events (trace_dat.h does that). `format`, if given, receives the file's
// version and compression. Everything is held in memory, so the data may
// decompress to at most `max_decompressed` bytes (a corrupt size is an error,
// not an allocation).
constexpr uint64_t kMaxContentsBytes = uint64_t{4} << 30;
Result<TraceDatContents> read_trace_dat_contents(Bytes file, TraceDatWriteOptions* format = nullptr,
                                                 uint64_t max_decompressed = kMaxContentsBytes);
Result<TraceDatContents> read_trace_dat_contents_file(const std::string& path,
                                                      TraceDatWriteOptions* format = nullptr);

// One compressed block as trace-cmd stores it (zlib: compress2 format;
// zstd: a frame without content size), and back; exposed for tests and
// corrupt-fixture generation.
Result<std::vector<uint8_t>> compress_block(TraceDatCompression c, Bytes in, int level = 0);
Result<std::vector<uint8_t>> decompress_block(TraceDatCompression c, Bytes in, size_t out_size);

}  // namespace tracebed::decode
