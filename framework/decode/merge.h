// Streaming per-CPU cursors over trace.dat ring-buffer data and their merge
// by time stamp, in the order `trace-cmd report` prints records:
// libtracecmd's tracecmd_peek_next_data() picks the CPU whose next record has
// the smallest stamp, ties going to the lower CPU index; trace-read.c then
// does the same across buffers (top level first, instances in file order).
// A scan finds that CPU when there are few; a tournament tree when many.
// A `cpus` filter hides records but still merges every CPU, as trace-cmd
// does, so peeking sees what trace-cmd's function_graph plugin sees.
//
// Memory stays flat: each CPU reads one window of pages (uncompressed data)
// or one chunk (compressed data) at a time, keeping the last three so the
// record returned last and a peeked record stay valid, plus (compressed, with
// a second CPU) up to four next chunks per CPU, decompressed ahead on a thread.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/decode/data_file.h"
#include "framework/decode/decompress.h"
#include "framework/decode/page_reader.h"
#include "framework/decode/trace_context.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode {

// A compressed chunk's header: where it is, its sizes compressed and not.
struct ChunkHeader {
  uint64_t at = 0;
  uint32_t zsize = 0, usize = 0;
};

// Where one CPU's sub-buffers are stored.
struct CpuSpan {
  int cpu = 0;
  uint64_t offset = 0;        // file offset of the data (compressed: the chunk count)
  uint64_t size = 0;          // bytes in the file
  bool compressed = false;
  uint32_t chunks = 0;        // compressed: number of chunks
  uint64_t data_size = 0;     // uncompressed bytes
  uint32_t page_size = 0;     // sub-buffer size of this buffer; 0 = StreamSetup::page_size
  uint64_t trace_cmd_size = 0;  // what trace-cmd 3.1.6 reads of data_size (TraceDatCpu)
  // compressed: each chunk's header, from scan_chunks, so a helper thread
  // can start on chunk i before chunk i - 1 is read, and a chunk is read
  // with one system call, not two
  std::shared_ptr<const std::vector<ChunkHeader>> chunk_at;
};

// Walks the chunk headers of a compressed CPU (u32 count; per chunk u32
// compressed size, u32 uncompressed size, data) and fills chunks, data_size
// and chunk_at.
// Every chunk must lie inside the CPU's span.
Status scan_chunks(const DataFile& file, CpuSpan& cpu, Endian endian);

// TIME_SHIFT (a guest's clock against its host, trace-cmd.dat.v7.5): per
// CPU, samples of (time, offset, scaling, fraction) sorted by time.
struct TimeSync {
  struct Sample {
    int64_t time = 0, offset = 0, scaling = 1, fraction = 0;
  };
  uint32_t flags = 0;                       // bit 0: interpolate between samples
  std::vector<std::vector<Sample>> cpus;    // by the CPU's index in the buffer

  // trace-input.c timestamp_host_sync(): the stamp on the host's clock.
  uint64_t apply(uint64_t ts, size_t cpu_index) const;
};

// Turns raw ring-buffer stamps into what trace-cmd prints (trace-input.c
// timestamp_calc): TSC2NSEC's mult/shift, then the OFFSET/DATE offsets.
// (TIME_SHIFT comes first and only for the top-level buffer; see TimeSync.)
struct TimeCorrection {
  int64_t offset = 0;
  int32_t tsc_mult = 0;       // 0: no TSC2NSEC option
  uint32_t tsc_shift = 0;
  // ns per tick the user gave (`report --ts2secs HZ`); it replaces the
  // TSC2NSEC option (trace-input.c timestamp_calc). 0: not given.
  double ts2secs = 0;
  bool scaled = false;        // tsc_mult or ts2secs: one test per record

  uint64_t apply(uint64_t ts) const {
    if (scaled) ts = ts2secs != 0 ? static_cast<uint64_t>(static_cast<double>(ts) * ts2secs) : mul_shift(ts);
    return ts + static_cast<uint64_t>(offset);
  }
  // trace-input.c mul_u64_u32_shr(), with its int mult sign-extended to
  // unsigned long long as the C code does. Inline: it runs for every record.
  uint64_t mul_shift(uint64_t ts) const {
    const uint64_t mul = static_cast<uint64_t>(static_cast<int64_t>(tsc_mult));
    if (tsc_shift > 32) return static_cast<uint64_t>((static_cast<unsigned __int128>(ts) * mul) >> tsc_shift);
    const uint64_t al = static_cast<uint32_t>(ts);
    const uint64_t ah = ts >> 32;
    uint64_t ret = (al * mul) >> tsc_shift;
    if (ah) ret += (ah * mul) << (32 - tsc_shift);
    return ret;
  }
};

// Default StreamSetup::linear_max; a variable so tests can force the tree
// through TraceDat::events().
inline size_t kMergeLinearMax = 8;

struct StreamSetup {
  std::shared_ptr<DataFile> file;
  PageLayout layout;
  uint32_t page_size = 4096;
  Codec codec = Codec::none;
  TimeCorrection time;
  std::shared_ptr<const TimeSync> sync;        // TIME_SHIFT, top-level buffer only; may be null
  std::vector<std::vector<CpuSpan>> buffers;   // [buffer][cpu in file order]
  std::optional<std::set<int>> cpus;           // CPU ids next() returns
  const TraceContext* context = nullptr;       // counts unknown event ids; may be null
  uint32_t window_pages = 16;                  // uncompressed read size, in pages
  // Uncompressed data: map windows of the file (read where mapping fails)
  // rather than read them. Like trace-cmd's own mapping, a file cut short
  // by another process while it is read is then a SIGBUS, not an error.
  bool map_data = true;
  // Up to this many CPUs the merge scans them all per record (cheapest for
  // few); beyond, a tournament tree. Tests set 0 to run the tree everywhere.
  size_t linear_max = kMergeLinearMax;
  bool as_trace_cmd = false;                   // stop each CPU at its trace_cmd_size
  // Compressed data: decompress each CPU's next chunks on a second thread
  // while this one decodes. Unset: when this process may use two CPUs.
  std::optional<bool> prefetch_chunks;
};

Result<std::unique_ptr<EventStream>> make_event_stream(StreamSetup setup);

}  // namespace tracebed::decode
