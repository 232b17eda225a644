// trace.dat v6 and v7 (trace-cmd's trace-cmd.dat.v6.5 / trace-cmd.dat.v7.5
// man pages; what trace-cmd 3.1.6 writes and reads in lib/trace-cmd/
// trace-input.c). Metadata is read once at open; ring-buffer data is left in
// the file and streamed by merge.cc.
#include "framework/decode/trace_dat.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "framework/decode/decompress.h"
#include "framework/decode/merge.h"

namespace tracebed {
namespace {

// Option and section ids (trace-cmd.dat.v7.5, OPTIONS SECTION).
enum : uint16_t {
  kOptDone = 0,
  kOptDate = 1,
  kOptCpuStat = 2,
  kOptBuffer = 3,
  kOptTraceClock = 4,
  kOptUname = 5,
  kOptHook = 6,
  kOptOffset = 7,
  kOptCpuCount = 8,
  kOptVersion = 9,
  kOptProcMaps = 10,
  kOptTraceId = 11,
  kOptTimeShift = 12,
  kOptGuest = 13,
  kOptTsc2Nsec = 14,
  kOptStrings = 15,
  kOptHeaderInfo = 16,
  kOptFtraceEvents = 17,
  kOptEventFormats = 18,
  kOptKallsyms = 19,
  kOptPrintk = 20,
  kOptCmdlines = 21,
  kOptBufferText = 22,
};

constexpr uint16_t kSectionCompressed = 1;       // section flags bit 0
constexpr uint64_t kMaxMetadataBytes = uint64_t{1} << 30;  // one decompressed section
constexpr uint32_t kMapSectionBytes = uint32_t{256} << 10;   // compressed sections mapped from this size
constexpr uint32_t kMaxOptionSections = 4096;    // length of the option chain
constexpr size_t kMaxName = 4096;                // version, compression and system names

std::string_view as_text(Bytes b) { return std::string_view(reinterpret_cast<const char*>(b.data()), b.size()); }

// Text of an option up to its first NUL.
std::string option_text(Bytes b) {
  std::string_view t = as_text(b);
  return std::string(t.substr(0, t.find('\0')));
}

// Sequential reads straight from the file, with ByteReader's interface, for
// v6 metadata (which has no section sizes to read ahead).
class FileCursor {
 public:
  FileCursor(const DataFile& file, uint64_t pos, Endian endian) : file_(file), pos_(pos), endian_(endian) {}

  uint64_t file_offset() const { return pos_; }
  uint64_t remaining() const { return pos_ < file_.size() ? file_.size() - pos_ : 0; }

  template <typename T>
  Result<T> read(std::string_view what) {
    if (const uint8_t* p = window(sizeof(T), what)) {
      pos_ += sizeof(T);
      return load<T>(p, endian_);
    }
    uint8_t b[sizeof(T)];
    TRACEBED_TRY(file_.read(pos_, std::span<uint8_t>(b, sizeof b), what));
    pos_ += sizeof b;
    return load<T>(b, endian_);
  }

  Status skip(uint64_t n, std::string_view what) {
    if (n > remaining()) return error_at(pos_, fmt::format("{}: {} bytes exceed file size {}", what, n, file_.size()));
    pos_ += n;
    return {};
  }

  // Valid until the next read.
  Result<Bytes> read_bytes(uint64_t n, std::string_view what) {
    if (n > remaining()) return error_at(pos_, fmt::format("{}: {} bytes exceed file size {}", what, n, file_.size()));
    if (const uint8_t* p = window(n, what)) {
      pos_ += n;
      return Bytes(p, static_cast<size_t>(n));
    }
    buf_.resize(n);
    TRACEBED_TRY(file_.read(pos_, buf_, what));
    pos_ += n;
    return Bytes(buf_);
  }

  // Valid until the next read.
  Result<std::string_view> read_cstring(std::string_view what) {
    const uint64_t start = pos_;
    if (const uint8_t* p = window(std::min<uint64_t>(1, remaining()), what)) {
      const size_t in_window = static_cast<size_t>(std::min<uint64_t>(window_.size() - (pos_ - window_at_), kMaxName));
      if (const void* nul = std::memchr(p, 0, in_window)) {
        const size_t n = static_cast<size_t>(static_cast<const uint8_t*>(nul) - p);
        pos_ += n + 1;
        return std::string_view(reinterpret_cast<const char*>(p), n);
      }
    }
    buf_.clear();
    uint8_t piece[64];
    while (buf_.size() < kMaxName) {
      const size_t n = static_cast<size_t>(std::min<uint64_t>(sizeof piece, remaining()));
      if (n == 0) break;
      TRACEBED_TRY(file_.read(pos_, std::span<uint8_t>(piece, n), what));
      const void* nul = std::memchr(piece, 0, n);
      const size_t take = nul ? static_cast<const uint8_t*>(nul) - piece : n;
      buf_.insert(buf_.end(), piece, piece + take);
      if (nul) {
        pos_ += take + 1;
        return std::string_view(reinterpret_cast<const char*>(buf_.data()), buf_.size());
      }
      pos_ += n;
    }
    if (remaining() == 0)
      return error_at(start, fmt::format("{}: file ends before the string's terminating NUL", what));
    return error_at(start, fmt::format("{}: string not terminated within {} bytes", what, kMaxName));
  }

 private:
  // Small reads are served from a window read ahead: a v6 file's metadata
  // is thousands of them (two per event format), and a pread each was
  // about half of opening s8 on a VM, where a system call costs microseconds.
  static constexpr uint64_t kWindow = 64 << 10;

  // `n` bytes at pos_ from the window, read ahead if need be; null where
  // they do not fit in one (the caller reads them itself).
  const uint8_t* window(uint64_t n, std::string_view what) {
    if (pos_ >= window_at_ && n <= window_.size() && pos_ - window_at_ <= window_.size() - n)
      return window_.data() + (pos_ - window_at_);
    const uint64_t len = std::min(kWindow, remaining());
    if (n == 0 || n > len) return nullptr;
    window_.resize(static_cast<size_t>(len));
    if (!file_.read(pos_, window_, what).ok()) {
      window_.clear();
      return nullptr;
    }
    window_at_ = pos_;
    return window_.data();
  }

  const DataFile& file_;
  uint64_t pos_;
  Endian endian_;
  ByteBuffer buf_;
  ByteBuffer window_;         // file bytes [window_at_, window_at_ + window_.size())
  uint64_t window_at_ = 0;
};

// ---------------------------------------------------------------------------
// Metadata bodies, the same in v6 (read from the file) and v7 (read from a
// section): R is FileCursor or ByteReader.

struct Sink {
  TraceContext& ctx;
  std::vector<std::string>& warnings;
  uint32_t file_long_size;
  std::string header_event;
  // Owns the bytes being read, if they outlive the reading (a v7 section):
  // deferred formats keep it instead of copies of their text.
  std::shared_ptr<const void> text_owner;
};

template <typename R>
Status expect_tag(R& r, std::string_view tag) {
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes b, r.read_bytes(tag.size() + 1, fmt::format("\"{}\" tag", tag)));
  if (std::memcmp(b.data(), tag.data(), tag.size()) != 0 || b[tag.size()] != 0)
    return error_at(at, fmt::format("expected the \"{}\" tag", tag));
  return {};
}

template <typename R>
Status read_header_info(R& r, Sink& s) {
  TRACEBED_TRY(expect_tag(r, "header_page"));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t size, r.template read<uint64_t>("header_page size"));
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes page, r.read_bytes(size, "header_page"));
  auto hp = parse_header_page(as_text(page), fmt::format("header_page at offset {:#x}", at));
  if (hp.ok()) {
    s.ctx.header_page = *hp;
    // The commit field is the kernel's long; trust it over user space's (trace-input.c does the same).
    s.ctx.long_size = (hp->commit_size == 4 || hp->commit_size == 8) ? hp->commit_size : s.file_long_size;
  } else {
    // libtraceevent keeps its defaults when header_page does not parse; the
    // sub-buffer layout then follows the file header's long size.
    s.warnings.push_back(hp.error().message);
    s.ctx.header_page.commit_size = s.file_long_size;
    s.ctx.header_page.data_offset = 8 + s.file_long_size;
    s.ctx.long_size = s.file_long_size;
  }
  TRACEBED_TRY(expect_tag(r, "header_event"));
  TRACEBED_ASSIGN_OR_RETURN(size, r.template read<uint64_t>("header_event size"));
  TRACEBED_ASSIGN_OR_RETURN(Bytes ev, r.read_bytes(size, "header_event"));
  s.header_event = std::string(as_text(ev));
  return {};
}

template <typename R>
Status read_format(R& r, Sink& s, std::string_view system, uint32_t index) {
  TRACEBED_ASSIGN_OR_RETURN(uint64_t size, r.template read<uint64_t>("event format size"));
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes text, r.read_bytes(size, "event format"));
  // trace-cmd counts formats that fail to parse and goes on; so do we. Most
  // are parsed when their event is first looked up (TraceDat::warnings()
  // parses the rest to tell which failed).
  Status st = s.ctx.defer_event_format(system, as_text(text), FormatOrigin::in_file(index, at), s.text_owner);
  if (!st.ok()) s.warnings.push_back(st.error().message);
  return {};
}

template <typename R>
Status read_ftrace_formats(R& r, Sink& s) {
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint32_t count, r.template read<uint32_t>("ftrace format count"));
  if (count > r.remaining() / 8)
    return error_at(at, fmt::format("ftrace format count {} cannot fit in the {} bytes left", count, r.remaining()));
  for (uint32_t i = 0; i < count; ++i) TRACEBED_TRY(read_format(r, s, "ftrace", i));
  return {};
}

template <typename R>
Status read_event_systems(R& r, Sink& s) {
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint32_t systems, r.template read<uint32_t>("event system count"));
  if (systems > r.remaining() / 5)
    return error_at(at, fmt::format("event system count {} cannot fit in the {} bytes left", systems, r.remaining()));
  for (uint32_t i = 0; i < systems; ++i) {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view name_view, r.read_cstring("event system name"));
    const std::string name(name_view);
    const uint64_t cat = r.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(uint32_t count, r.template read<uint32_t>("event format count"));
    if (count > r.remaining() / 8)
      return error_at(cat, fmt::format("system {}: event format count {} cannot fit in the {} bytes left", name, count,
                                       r.remaining()));
    for (uint32_t j = 0; j < count; ++j) TRACEBED_TRY(read_format(r, s, name, j));
  }
  return {};
}

template <typename R, typename Size>
Result<Bytes> read_sized_text(R& r, std::string_view what) {
  TRACEBED_ASSIGN_OR_RETURN(Size size, r.template read<Size>(fmt::format("{} size", what)));
  return r.read_bytes(size, what);
}

template <typename R>
Status read_printk(R& r, Sink& s) {
  TRACEBED_ASSIGN_OR_RETURN(Bytes text, (read_sized_text<R, uint32_t>(r, "printk formats")));
  if (!text.empty()) s.ctx.parse_printk_formats(as_text(text));
  return {};
}

template <typename R>
Status read_cmdlines(R& r, Sink& s) {
  TRACEBED_ASSIGN_OR_RETURN(Bytes text, (read_sized_text<R, uint64_t>(r, "saved cmdlines")));
  if (!text.empty()) s.ctx.parse_cmdlines(as_text(text));
  return {};
}

// ---------------------------------------------------------------------------
// Options

struct BufferOption {
  uint64_t offset = 0;
  std::string name;
  std::string clock;
  uint32_t page_size = 0;
  std::vector<CpuSpan> cpus;
  bool latency = false;
};

struct Options {
  int64_t ts_offset = 0;
  TimeCorrection time;
  bool use_trace_clock = false;
  std::shared_ptr<TimeSync> sync;         // TIME_SHIFT
  std::string uname;
  std::optional<uint32_t> cpu_count;
  std::vector<BufferOption> buffers;
  std::map<uint16_t, uint64_t> sections;  // v7: section offsets by id
  uint64_t next_options = 0;              // v7: DONE's pointer
  bool done = false;
};

Status parse_option(uint16_t id, Bytes data, uint64_t at, Endian e, int version, Options& o) {
  ByteReader r(data, e, at);
  auto text_number = [&](int64_t& out) {
    const std::string t = option_text(data);
    out = std::strtoll(t.c_str(), nullptr, 0);
  };
  switch (id) {
    case kOptDate: {  // µs between the stamps and the wall clock, as text
      int64_t v = 0;
      text_number(v);
      o.ts_offset += v * 1000;
      break;
    }
    case kOptOffset: {
      int64_t v = 0;
      text_number(v);
      o.ts_offset += v;
      break;
    }
    case kOptTsc2Nsec:
      if (data.size() >= 16) {
        o.time.tsc_mult = static_cast<int32_t>(load<uint32_t>(data.data(), e));
        o.time.tsc_shift = load<uint32_t>(data.data() + 4, e);
      }
      break;
    case kOptTimeShift: {
      // u64 peer trace id, u32 flags, u32 cpu count; per CPU: u32 count and
      // count times, offsets and scalings (s64); then, if present, count
      // fractions per CPU (trace-input.c tsync_cpu_offsets_load).
      if (data.size() < 16) break;
      auto sync = std::make_shared<TimeSync>();
      TRACEBED_TRY(r.skip(8, "TIME_SHIFT trace id"));
      TRACEBED_ASSIGN_OR_RETURN(sync->flags, r.read<uint32_t>("TIME_SHIFT flags"));
      TRACEBED_ASSIGN_OR_RETURN(uint32_t ncpu, r.read<uint32_t>("TIME_SHIFT cpu count"));
      if (ncpu > r.remaining() / 4)
        return error_at(r.file_offset(), fmt::format("TIME_SHIFT: {} cpus cannot fit in {} bytes", ncpu, r.remaining()));
      sync->cpus.resize(ncpu);
      for (auto& samples : sync->cpus) {
        TRACEBED_ASSIGN_OR_RETURN(uint32_t count, r.read<uint32_t>("TIME_SHIFT sample count"));
        if (count > r.remaining() / 24)
          return error_at(r.file_offset(),
                          fmt::format("TIME_SHIFT: {} samples cannot fit in {} bytes", count, r.remaining()));
        samples.resize(count);
        for (int64_t TimeSync::Sample::*field : {&TimeSync::Sample::time, &TimeSync::Sample::offset, &TimeSync::Sample::scaling})
          for (auto& smp : samples) {
            TRACEBED_ASSIGN_OR_RETURN(uint64_t v, r.read<uint64_t>("TIME_SHIFT sample"));
            smp.*field = static_cast<int64_t>(v);
          }
      }
      if (!r.at_end()) {
        for (auto& samples : sync->cpus)
          for (auto& smp : samples) {
            TRACEBED_ASSIGN_OR_RETURN(uint64_t v, r.read<uint64_t>("TIME_SHIFT fraction"));
            smp.fraction = static_cast<int64_t>(v);
          }
      }
      for (auto& samples : sync->cpus) {
        std::stable_sort(samples.begin(), samples.end(),
                         [](const TimeSync::Sample& a, const TimeSync::Sample& b) { return a.time < b.time; });
        samples.erase(std::unique(samples.begin(), samples.end(),
                                  [](const TimeSync::Sample& a, const TimeSync::Sample& b) { return a.time == b.time; }),
                      samples.end());
      }
      o.sync = std::move(sync);
      break;
    }
    case kOptTraceClock:
      o.use_trace_clock = true;
      break;
    case kOptUname:
      o.uname = option_text(data);
      break;
    case kOptCpuCount:
      if (data.size() >= 4) o.cpu_count = load<uint32_t>(data.data(), e);
      break;
    case kOptBuffer:
    case kOptBufferText: {
      BufferOption b;
      TRACEBED_ASSIGN_OR_RETURN(b.offset, r.read<uint64_t>("BUFFER option offset"));
      TRACEBED_ASSIGN_OR_RETURN(std::string_view name, r.read_cstring("BUFFER option name"));
      b.name = std::string(name);
      b.latency = id == kOptBufferText;
      if (version >= 7) {
        TRACEBED_ASSIGN_OR_RETURN(std::string_view clock, r.read_cstring("BUFFER option clock"));
        b.clock = std::string(clock);
        if (r.remaining() >= 4) {
          TRACEBED_ASSIGN_OR_RETURN(b.page_size, r.read<uint32_t>("BUFFER option page size"));
        }
        if (id == kOptBuffer) {
          TRACEBED_ASSIGN_OR_RETURN(uint32_t cpus, r.read<uint32_t>("BUFFER option cpu count"));
          if (cpus > r.remaining() / 20)
            return error_at(r.file_offset(), fmt::format("BUFFER option: {} cpus cannot fit in {} bytes", cpus,
                                                         r.remaining()));
          for (uint32_t i = 0; i < cpus; ++i) {
            CpuSpan c;
            TRACEBED_ASSIGN_OR_RETURN(uint32_t cpu, r.read<uint32_t>("BUFFER option cpu id"));
            c.cpu = static_cast<int>(cpu);
            TRACEBED_ASSIGN_OR_RETURN(c.offset, r.read<uint64_t>("BUFFER option cpu offset"));
            TRACEBED_ASSIGN_OR_RETURN(c.size, r.read<uint64_t>("BUFFER option cpu size"));
            b.cpus.push_back(c);
          }
        }
      }
      o.buffers.push_back(std::move(b));
      break;
    }
    case kOptHeaderInfo:
    case kOptFtraceEvents:
    case kOptEventFormats:
    case kOptKallsyms:
    case kOptPrintk:
    case kOptCmdlines:
      if (version >= 7 && data.size() >= 8) o.sections[id] = load<uint64_t>(data.data(), e);
      break;
    case kOptDone:
      if (data.size() >= 8) o.next_options = load<uint64_t>(data.data(), e);
      o.done = true;
      break;
    default:  // CPUSTAT, VERSION, HOOK, PROCMAPS, TRACEID, GUEST and unknown ids change nothing we print
      break;
  }
  return {};
}

// ---------------------------------------------------------------------------
// The file

class TraceDatImpl final : public TraceDat {
 public:
  const std::string& path() const override { return path_; }
  int version() const override { return version_; }
  std::string compression() const override { return std::string(codec_name(codec_)); }
  int cpu_count() const override { return cpu_count_; }
  TraceContext& context() override { return ctx_; }
  const std::vector<TraceDatBuffer>& buffers() const override { return buffers_; }
  const std::string& uname() const override { return opts_.uname; }
  int64_t ts_offset() const override { return opts_.ts_offset; }
  bool stamps_in_ns() const override {
    if (opts_.time.tsc_mult) return true;
    const std::string clock = buffers_.empty() ? std::string() : buffers_[0].clock;
    // trace-input.c is_timestamp_in_us(); a file that names no clock is "local".
    return clock.empty() || clock == "local" || clock == "global" || clock == "uptime" || clock == "perf" ||
           clock.starts_with("mono") || clock == "boot" || clock == "tai";
  }
  const std::vector<std::string>& warnings() const override {
    // Then the formats that failed when parsed (most are parsed only when
    // first looked up: this parses the rest).
    all_warnings_ = warnings_;
    for (std::string& e : ctx_.format_errors()) all_warnings_.push_back(std::move(e));
    return all_warnings_;
  }

  Result<std::unique_ptr<EventStream>> events(std::optional<std::set<int>> cpus) override {
    return stream(std::move(cpus), false);
  }
  Result<std::unique_ptr<EventStream>> trace_cmd_events(std::optional<std::set<int>> cpus) override {
    return stream(std::move(cpus), true);
  }

  Result<std::unique_ptr<EventStream>> stream(std::optional<std::set<int>> cpus, bool as_trace_cmd) {
    if (!buffers_.empty() && buffers_[0].latency && spans_[0].empty())
      return Error{"latency-format file: its text is in latency_text(), it has no ring-buffer events"};
    StreamSetup s;
    s.file = file_;
    s.layout = PageLayout{ctx_.endian, ctx_.long_size};
    s.page_size = page_size_;
    s.codec = codec_;
    s.time = opts_.time;
    s.time.offset = opts_.ts_offset;
    s.sync = opts_.sync;
    s.buffers = spans_;
    s.cpus = std::move(cpus);
    s.context = &ctx_;
    s.as_trace_cmd = as_trace_cmd;
    s.prefetch_chunks = decompress_ahead_;
    s.map_data = map_file_;
    return make_event_stream(std::move(s));
  }

  void set_decompress_ahead(std::optional<bool> on) override { decompress_ahead_ = on; }
  void set_map_file(bool on) override { map_file_ = on; }

  Result<std::string> latency_text() override {
    if (!latency_) return Error{"not a latency-format file"};
    if (version_ < 7) {
      const uint64_t n = file_->size() - latency_offset_;
      std::string out(n, '\0');
      TRACEBED_TRY(file_->read(latency_offset_, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), n),
                               "latency text"));
      return out;
    }
    // v7: the BUFFER_TEXT section, compressed in chunks like CPU data or stored as is.
    if (!latency_compressed_) {
      std::string out(latency_size_, '\0');
      TRACEBED_TRY(file_->read(latency_offset_,
                               std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()), out.size()),
                               "latency text"));
      return out;
    }
    CpuSpan span;
    span.offset = latency_offset_;
    span.size = latency_size_;
    span.compressed = true;
    TRACEBED_TRY(scan_chunks(*file_, span, ctx_.endian));
    std::string out;
    uint64_t pos = span.offset + 4;
    std::vector<uint8_t> z;
    for (uint32_t i = 0; i < span.chunks; ++i) {
      uint8_t h[8];
      TRACEBED_TRY(file_->read(pos, std::span<uint8_t>(h, 8), "latency chunk header"));
      const uint32_t zsize = load<uint32_t>(h, ctx_.endian), usize = load<uint32_t>(h + 4, ctx_.endian);
      z.resize(zsize);
      TRACEBED_TRY(file_->read(pos + 8, z, "latency chunk"));
      TRACEBED_TRY(check_decompressed_size(codec_, z, usize, fmt::format("offset {:#x}: latency chunk {}", pos, i)));
      const size_t old = out.size();
      out.resize(old + usize);
      TRACEBED_TRY(decompress(codec_, z, std::span<uint8_t>(reinterpret_cast<uint8_t*>(out.data()) + old, usize),
                              fmt::format("offset {:#x}: latency chunk {}", pos, i)));
      pos += 8 + uint64_t{zsize};
    }
    return out;
  }

  Status open(const std::string& path);

 private:
  Status read_header(FileCursor& c);
  Status read_v6(FileCursor& c);
  Status read_v7(uint64_t options_offset);
  Status read_v6_options(FileCursor& c, Options& into);
  Status read_v6_cpu_table(FileCursor& c, uint32_t cpus, std::vector<CpuSpan>& out);
  // A section's flags, where its data starts and its size in the file.
  struct SectionInfo {
    uint16_t flags = 0;
    uint64_t data = 0, size = 0;
    bool compressed() const { return flags & kSectionCompressed; }
  };
  // `body` false: only the header (and a compressed block's header) is checked.
  // `ready`, if given, hears of a compressed body as it is decompressed: the
  // first n bytes of `out` are final. It may keep `out` (another thread
  // reading it): if the section fails halfway, what it kept stays valid.
  using SectionProgress = std::function<void(const std::shared_ptr<const ByteBuffer>& out, size_t n)>;
  Result<ByteBuffer> read_section(uint64_t offset, uint16_t want_id, SectionInfo* info, bool body = true,
                                  const SectionProgress* ready = nullptr);
  Status defer_v6_kallsyms(FileCursor& c);
  Status defer_v7_kallsyms();
  // A kallsyms text stored as it is at `at`: mapped if set_map_file is on
  // and the mapping works, else read.
  Result<TraceContext::KallsymsText> stored_kallsyms(uint64_t at, uint32_t size) const;
  Status add_buffers_v7();
  Status finish_buffers();

  std::string path_;
  std::shared_ptr<DataFile> file_;
  int version_ = 0;
  Codec codec_ = Codec::none;
  uint32_t page_size_ = 0;
  uint32_t file_long_size_ = 8;
  int cpu_count_ = 0;
  TraceContext ctx_;
  Options opts_;
  std::vector<std::string> warnings_;
  mutable std::vector<std::string> all_warnings_;  // warnings_ and the formats' errors
  std::vector<TraceDatBuffer> buffers_;
  std::vector<std::vector<CpuSpan>> spans_;
  bool latency_ = false;
  bool latency_compressed_ = false;
  std::optional<bool> decompress_ahead_;
  bool map_file_ = true;
  uint64_t latency_offset_ = 0;
  uint64_t latency_size_ = 0;
};

Status TraceDatImpl::read_header(FileCursor& c) {
  TRACEBED_ASSIGN_OR_RETURN(Bytes magic, c.read_bytes(10, "file header"));
  if (magic[0] != 0x17 || magic[1] != 0x08 || magic[2] != 0x44)
    return error_at(0, fmt::format("not a trace.dat file: magic {:02x} {:02x} {:02x}, want 17 08 44", magic[0],
                                   magic[1], magic[2]));
  if (std::memcmp(magic.data() + 3, "tracing", 7) != 0) return error_at(3, "not a trace.dat file: no \"tracing\" after the magic");
  TRACEBED_ASSIGN_OR_RETURN(std::string_view ver, c.read_cstring("version"));
  if (ver == "6")
    version_ = 6;
  else if (ver == "7")
    version_ = 7;
  else
    return error_at(10, fmt::format("unsupported trace.dat version \"{}\" (this reader knows 6 and 7)", ver));
  const uint64_t eat = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint8_t endian, c.read<uint8_t>("endian"));
  if (endian > 1) return error_at(eat, fmt::format("endian byte {} is neither 0 (little) nor 1 (big)", endian));
  ctx_.endian = endian ? Endian::big : Endian::little;
  const uint64_t lat = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint8_t long_size, c.read<uint8_t>("long size"));
  if (long_size != 4 && long_size != 8) return error_at(lat, fmt::format("long size {} is neither 4 nor 8", long_size));
  file_long_size_ = long_size;
  ctx_.long_size = long_size;
  return {};
}

Status TraceDatImpl::open(const std::string& path) {
  path_ = path;
  TRACEBED_ASSIGN_OR_RETURN(file_, DataFile::open(path));
  FileCursor c(*file_, 0, Endian::little);
  TRACEBED_TRY(read_header(c));
  FileCursor r(*file_, c.file_offset(), ctx_.endian);
  const uint64_t pat = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(page_size_, r.read<uint32_t>("page size"));
  if (page_size_ < 16 || page_size_ > (rb::kCommitMask + 1))
    return error_at(pat, fmt::format("page size {} is out of range (16 to {})", page_size_, rb::kCommitMask + 1));
  ctx_.page_size = page_size_;
  if (version_ == 6) return read_v6(r);
  const uint64_t cat = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(std::string_view codec, r.read_cstring("compression name"));
  auto codec_r = codec_by_name(codec);
  if (!codec_r.ok()) return codec_r.error().within(fmt::format("offset {:#x}", cat));
  codec_ = *codec_r;
  TRACEBED_ASSIGN_OR_RETURN(std::string_view codec_version, r.read_cstring("compression version"));
  (void)codec_version;  // trace-cmd only checks that its library can read the name
  TRACEBED_ASSIGN_OR_RETURN(uint64_t options, r.read<uint64_t>("offset of the first options section"));
  return read_v7(options);
}

Status TraceDatImpl::read_v6(FileCursor& c) {
  Sink s{ctx_, warnings_, file_long_size_, {}, nullptr};
  TRACEBED_TRY(read_header_info(c, s));
  TRACEBED_TRY(read_ftrace_formats(c, s));
  TRACEBED_TRY(read_event_systems(c, s));
  TRACEBED_TRY(defer_v6_kallsyms(c));
  TRACEBED_TRY(read_printk(c, s));
  TRACEBED_TRY(read_cmdlines(c, s));
  TRACEBED_ASSIGN_OR_RETURN(uint32_t cpus, c.read<uint32_t>("cpu count"));
  uint64_t at = c.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes tag, c.read_bytes(10, "options/flyrecord tag"));
  if (as_text(tag).starts_with("options")) {
    TRACEBED_TRY(read_v6_options(c, opts_));
    at = c.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(tag, c.read_bytes(10, "flyrecord tag"));
  }
  if (opts_.cpu_count) cpus = *opts_.cpu_count;
  cpu_count_ = static_cast<int>(cpus);
  TraceDatBuffer top;
  std::vector<CpuSpan> top_spans;
  if (as_text(tag).starts_with("latency")) {
    latency_ = true;
    top.latency = true;
    // trace-input.c init_data_v6 reads a trace clock blob (u64 size + text)
    // after the tag whenever a TRACECLOCK option was seen, latency or not;
    // when the size is impossible it stops after the 8 bytes. The text
    // trace-cmd prints starts where that leaves the file.
    if (opts_.use_trace_clock && c.remaining() >= 8) {
      TRACEBED_ASSIGN_OR_RETURN(uint64_t size, c.read<uint64_t>("trace clock size"));
      if (size <= c.remaining()) {
        auto clock = c.read_bytes(size, "trace clock");
        if (!clock.ok()) return clock.error();
      }
    }
    latency_offset_ = c.file_offset();
  } else if (as_text(tag).starts_with("flyrecord")) {
    TRACEBED_TRY(read_v6_cpu_table(c, cpus, top_spans));
    if (opts_.use_trace_clock) {
      // The trace_clock file: "local [global] counter ..."; the bracketed one
      // is in use. trace-cmd falls back to "local" when the blob is unreadable
      // ("File has trace_clock bug, using local clock").
      auto clock = read_sized_text<FileCursor, uint64_t>(c, "trace clock");
      if (clock.ok()) {
        std::string_view t = as_text(*clock);
        const size_t open = t.find('[');
        const size_t close = open == std::string_view::npos ? open : t.find(']', open);
        if (close != std::string_view::npos) top.clock = std::string(t.substr(open + 1, close - open - 1));
      } else {
        warnings_.push_back(clock.error().message + " (using the local clock, as trace-cmd does)");
        top.clock = "local";
      }
    }
  } else {
    return error_at(at, "expected \"options\", \"latency\" or \"flyrecord\"");
  }
  buffers_.push_back(top);
  spans_.push_back(std::move(top_spans));
  // Instances: each BUFFER option points at its own "flyrecord" CPU table.
  for (const BufferOption& b : opts_.buffers) {
    FileCursor bc(*file_, b.offset, ctx_.endian);
    TRACEBED_ASSIGN_OR_RETURN(Bytes btag, bc.read_bytes(10, fmt::format("buffer \"{}\" tag", b.name)));
    if (as_text(btag).starts_with("options")) {
      // An instance's own options (trace-cmd reads them into the instance's
      // handle); they must not add to the list this loop walks.
      Options ignored;
      TRACEBED_TRY(read_v6_options(bc, ignored));
      TRACEBED_ASSIGN_OR_RETURN(btag, bc.read_bytes(10, fmt::format("buffer \"{}\" tag", b.name)));
    }
    if (!as_text(btag).starts_with("flyrecord"))
      return error_at(b.offset, fmt::format("buffer \"{}\": expected \"flyrecord\"", b.name));
    TraceDatBuffer tb;
    tb.name = b.name;
    tb.clock = buffers_[0].clock;
    std::vector<CpuSpan> sp;
    TRACEBED_TRY(read_v6_cpu_table(bc, cpus, sp));
    if (b.name.empty()) {
      buffers_[0].cpus.clear();
      spans_[0] = std::move(sp);
    } else {
      buffers_.push_back(tb);
      spans_.push_back(std::move(sp));
    }
  }
  return finish_buffers();
}

Status TraceDatImpl::read_v6_options(FileCursor& c, Options& into) {
  // Each option takes at least 6 bytes of the file, so this ends.
  for (;;) {
    TRACEBED_ASSIGN_OR_RETURN(uint16_t id, c.read<uint16_t>("option id"));
    if (id == kOptDone) return {};
    const uint64_t at = c.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(uint32_t size, c.read<uint32_t>("option size"));
    TRACEBED_ASSIGN_OR_RETURN(Bytes data, c.read_bytes(size, fmt::format("option {}", id)));
    std::vector<uint8_t> copy(data.begin(), data.end());
    TRACEBED_TRY(parse_option(id, copy, at + 4, ctx_.endian, 6, into));
  }
}

Status TraceDatImpl::read_v6_cpu_table(FileCursor& c, uint32_t cpus, std::vector<CpuSpan>& out) {
  if (cpus > c.remaining() / 16)
    return error_at(c.file_offset(), fmt::format("cpu table of {} cpus exceeds file size {}", cpus, file_->size()));
  for (uint32_t i = 0; i < cpus; ++i) {
    CpuSpan s;
    s.cpu = static_cast<int>(i);
    TRACEBED_ASSIGN_OR_RETURN(s.offset, c.read<uint64_t>("cpu data offset"));
    TRACEBED_ASSIGN_OR_RETURN(s.size, c.read<uint64_t>("cpu data size"));
    out.push_back(s);
  }
  return {};
}

Result<ByteBuffer> TraceDatImpl::read_section(uint64_t offset, uint16_t want_id, SectionInfo* info, bool body,
                                              const SectionProgress* ready) {
  uint8_t h[16];
  TRACEBED_TRY(file_->read(offset, std::span<uint8_t>(h, 16), fmt::format("section {} header", want_id)));
  const uint16_t id = load<uint16_t>(h, ctx_.endian);
  const uint16_t flags = load<uint16_t>(h + 2, ctx_.endian);
  const uint64_t size = load<uint64_t>(h + 8, ctx_.endian);
  if (id != want_id)
    return error_at(offset, fmt::format("section id {}, but the option pointing here says {}", id, want_id));
  const uint64_t data = offset + 16;
  if (size > file_->size() - std::min(file_->size(), data))
    return error_at(offset, fmt::format("section {} size {} exceeds file size {}", id, size, file_->size()));
  if (info) *info = SectionInfo{flags, data, size};
  if (!(flags & kSectionCompressed)) {
    if (size > kMaxMetadataBytes)
      return error_at(offset, fmt::format("section {} size {} is implausible", id, size));
    if (!body) return ByteBuffer();
    ByteBuffer out(size);
    TRACEBED_TRY(file_->read(data, out, fmt::format("section {}", id)));
    return out;
  }
  if (size < 8) return error_at(offset, fmt::format("section {} is compressed but only {} bytes long", id, size));
  uint8_t b[8];
  TRACEBED_TRY(file_->read(data, std::span<uint8_t>(b, 8), fmt::format("section {} block header", id)));
  const uint32_t zsize = load<uint32_t>(b, ctx_.endian);
  const uint32_t usize = load<uint32_t>(b + 4, ctx_.endian);
  if (zsize > file_->size() - std::min(file_->size(), data + 8))
    return error_at(data, fmt::format("section {} compressed size {} exceeds file size {}", id, zsize, file_->size()));
  if (zsize > size - 8)
    return error_at(data, fmt::format("section {} compressed size {} exceeds the section's {} bytes", id, zsize, size));
  if (usize > kMaxMetadataBytes)
    return error_at(data, fmt::format("section {} uncompressed size {} is implausible", id, usize));
  if (!body) return ByteBuffer();
  // A large one (kallsyms) is mapped rather than copied: a fresh buffer for
  // it costs a page fault per page. Where mapping fails, it is read.
  std::shared_ptr<const uint8_t> mapped;
  ByteBuffer copy;
  if (map_file_ && zsize >= kMapSectionBytes) {
    if (auto m = file_->map(data + 8, zsize, fmt::format("section {}", id)); m.ok()) mapped = std::move(m).value();
  }
  if (!mapped) {
    copy.resize(zsize);
    TRACEBED_TRY(file_->read(data + 8, copy, fmt::format("section {}", id)));
  }
  const Bytes z = mapped ? Bytes(mapped.get(), zsize) : Bytes(copy);
  const std::string where = fmt::format("offset {:#x}: section {}", data, id);
  if (ready) {
    auto out = std::make_shared<ByteBuffer>(usize);
    TRACEBED_TRY(decompress_in_steps(codec_, z, *out, where, [&](size_t n) { (*ready)(out, n); }));
    return std::move(*out);  // the bytes do not move: what `ready` was shown stays where it was
  }
  ByteBuffer out(usize);
  TRACEBED_TRY(decompress(codec_, z, out, where));
  return out;
}

// kallsyms is most of a trace.dat's metadata and only symbol lookups need
// it: check where it lies now, read (and decompress) it on the first lookup.
// What can only fail then (a corrupt compressed block, a bad size inside)
// is reported by TraceContext::kallsyms_error().
Status TraceDatImpl::defer_v6_kallsyms(FileCursor& c) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t size, c.read<uint32_t>("kallsyms size"));
  const uint64_t at = c.file_offset();
  TRACEBED_TRY(c.skip(size, "kallsyms"));
  if (size == 0) return {};
  ctx_.defer_kallsyms([this, at, size](const TraceContext::KallsymsProgress&) { return stored_kallsyms(at, size); });
  return {};
}

Result<TraceContext::KallsymsText> TraceDatImpl::stored_kallsyms(uint64_t at, uint32_t size) const {
  TraceContext::KallsymsText text;
  text.size = size;
  if (map_file_) {
    if (auto mapped = file_->map(at, size, "kallsyms"); mapped.ok()) {
      text.mapped = std::move(mapped).value();
      return text;
    }
  }
  text.storage.resize(size);
  if (Status st = file_->read(at, text.storage, "kallsyms"); !st.ok()) return st.error().within(file_->path());
  return text;
}

Status TraceDatImpl::defer_v7_kallsyms() {
  auto it = opts_.sections.find(kOptKallsyms);
  if (it == opts_.sections.end()) return {};
  const uint64_t offset = it->second;
  SectionInfo head;
  if (auto header = read_section(offset, kOptKallsyms, &head, false); !header.ok()) return header.error();
  // A compressed section tells how far it is decompressed: the lines are
  // parsed meanwhile where there is a CPU to spare (TraceContext).
  ctx_.defer_kallsyms([this, offset, head](const TraceContext::KallsymsProgress& progress) -> Result<TraceContext::KallsymsText> {
    auto fail = [&](const Error& e) { return e.within(path_); };
    // Stored as it is (the header checked at open): mapped or read, as v6's is.
    if (!head.compressed() && head.size >= 4) {
      uint8_t b[4];
      if (Status st = file_->read(head.data, std::span<uint8_t>(b, 4), "kallsyms size"); !st.ok()) return fail(st.error());
      const uint32_t size = load<uint32_t>(b, ctx_.endian);
      if (size > 0 && size <= head.size - 4) return stored_kallsyms(head.data + 4, size);
    }
    // The section is the text's u32 size, then the text.
    const SectionProgress text_ready = [&](const std::shared_ptr<const ByteBuffer>& out, size_t n) {
      if (n < 4) return;
      const uint32_t size = load<uint32_t>(out->data(), ctx_.endian);
      if (size <= out->size() - 4) progress(out, reinterpret_cast<const char*>(out->data()) + 4, n - 4, size);
    };
    SectionInfo info;
    auto sec = read_section(offset, kOptKallsyms, &info, true, &text_ready);
    if (!sec.ok()) return fail(sec.error());
    const bool packed = info.compressed();
    ByteReader r(*sec, ctx_.endian, packed ? 0 : info.data);
    auto size = r.read<uint32_t>("kallsyms size");
    if (!size.ok()) return fail(size.error());
    auto bytes = r.read_bytes(*size, "kallsyms");
    if (!bytes.ok()) {
      Error e = bytes.error();
      if (packed) e = e.within(fmt::format("offset {:#x}: section {} (decompressed)", offset, kOptKallsyms));
      return fail(e);
    }
    TraceContext::KallsymsText text;
    text.offset = static_cast<size_t>(bytes->data() - sec->data());
    text.size = bytes->size();
    text.storage = std::move(sec).value();
    return text;
  }, /*in_steps=*/head.compressed());
  return {};
}

Status TraceDatImpl::read_v7(uint64_t options_offset) {
  // The option chain: each options section ends with DONE pointing at the next.
  std::set<uint64_t> seen;
  uint64_t next = options_offset;
  while (next) {
    if (!seen.insert(next).second || seen.size() > kMaxOptionSections)
      return error_at(next, "options sections form a loop");
    SectionInfo info;
    TRACEBED_ASSIGN_OR_RETURN(ByteBuffer sec, read_section(next, kOptDone, &info));
    const bool packed = info.compressed();
    ByteReader r(sec, ctx_.endian, packed ? 0 : info.data);
    opts_.done = false;
    opts_.next_options = 0;
    while (!opts_.done) {
      auto opt = [&]() -> Status {
        TRACEBED_ASSIGN_OR_RETURN(uint16_t id, r.read<uint16_t>("option id"));
        TRACEBED_ASSIGN_OR_RETURN(uint32_t size, r.read<uint32_t>("option size"));
        const uint64_t at = r.file_offset();
        TRACEBED_ASSIGN_OR_RETURN(Bytes data, r.read_bytes(size, fmt::format("option {}", id)));
        return parse_option(id, data, at, ctx_.endian, 7, opts_);
      }();
      if (!opt.ok())
        return packed ? opt.error().within(fmt::format("offset {:#x}: options section (decompressed)", next))
                      : opt.error();
      if (r.at_end() && !opts_.done) return error_at(next, "options section ends without a DONE option");
    }
    next = opts_.next_options;
  }

  // Metadata sections, in v6's order so the header page is known first.
  Sink s{ctx_, warnings_, file_long_size_, {}, nullptr};
  auto section = [&](uint16_t id, Status (*body)(ByteReader&, Sink&)) -> Status {
    auto it = opts_.sections.find(id);
    if (it == opts_.sections.end()) return {};
    SectionInfo info;
    TRACEBED_ASSIGN_OR_RETURN(ByteBuffer bytes, read_section(it->second, id, &info));
    const bool packed = info.compressed();
    auto sec = std::make_shared<const ByteBuffer>(std::move(bytes));
    ByteReader r(*sec, ctx_.endian, packed ? 0 : info.data);
    s.text_owner = sec;
    Status st = body(r, s);
    s.text_owner.reset();
    if (!st.ok() && packed)
      return st.error().within(fmt::format("offset {:#x}: section {} (decompressed)", it->second, id));
    return st;
  };
  if (!opts_.sections.count(kOptHeaderInfo)) return Error{"no header_page section (option HEADER_INFO missing)"};
  TRACEBED_TRY(section(kOptHeaderInfo, [](ByteReader& r, Sink& s) { return read_header_info(r, s); }));
  TRACEBED_TRY(section(kOptFtraceEvents, [](ByteReader& r, Sink& s) { return read_ftrace_formats(r, s); }));
  TRACEBED_TRY(section(kOptEventFormats, [](ByteReader& r, Sink& s) { return read_event_systems(r, s); }));
  TRACEBED_TRY(defer_v7_kallsyms());
  TRACEBED_TRY(section(kOptPrintk, [](ByteReader& r, Sink& s) { return read_printk(r, s); }));
  TRACEBED_TRY(section(kOptCmdlines, [](ByteReader& r, Sink& s) { return read_cmdlines(r, s); }));
  return add_buffers_v7();
}

Status TraceDatImpl::add_buffers_v7() {
  buffers_.push_back(TraceDatBuffer{});
  spans_.emplace_back();
  bool top_seen = false;
  for (BufferOption& b : opts_.buffers) {
    uint8_t h[16];
    TRACEBED_TRY(file_->read(b.offset, std::span<uint8_t>(h, 16), fmt::format("buffer \"{}\" section header", b.name)));
    const uint16_t id = load<uint16_t>(h, ctx_.endian);
    const uint16_t flags = load<uint16_t>(h + 2, ctx_.endian);
    const uint64_t size = load<uint64_t>(h + 8, ctx_.endian);
    const uint16_t want = b.latency ? kOptBufferText : kOptBuffer;
    if (id != want)
      return error_at(b.offset, fmt::format("buffer \"{}\": section id {}, want {}", b.name, id, want));
    const bool compressed = flags & kSectionCompressed;
    TraceDatBuffer tb;
    tb.name = b.name;
    tb.clock = b.clock;
    tb.latency = b.latency;
    if (b.latency) {
      latency_ = true;
      latency_compressed_ = compressed;
      latency_offset_ = b.offset + 16;
      if (size > file_->size() - std::min(file_->size(), latency_offset_))
        return error_at(b.offset, fmt::format("section {} size {} exceeds file size {}", id, size, file_->size()));
      latency_size_ = size;
    }
    const uint32_t psize = b.page_size ? b.page_size : page_size_;
    if (psize < PageLayout{ctx_.endian, ctx_.long_size}.header_size() || psize > rb::kCommitMask + 1)
      return error_at(b.offset, fmt::format("buffer \"{}\": sub-buffer size {} is out of range", b.name, psize));
    for (CpuSpan& c : b.cpus) {
      c.compressed = compressed;
      c.page_size = psize;
    }
    if (b.name.empty() && !top_seen) {
      top_seen = true;
      buffers_[0] = tb;
      spans_[0] = b.cpus;
    } else {
      buffers_.push_back(tb);
      spans_.push_back(b.cpus);
    }
  }
  // `cpus=N` in the report is libtracecmd's max_cpu: the larger of CPUCOUNT
  // and the number of CPUs the top buffer lists (edge fixture e08 lists CPUs
  // 1 and 3 of 4 and trace-cmd prints cpus=4).
  cpu_count_ = static_cast<int>(std::max<uint64_t>(opts_.cpu_count.value_or(0), spans_[0].size()));
  return finish_buffers();
}

Status TraceDatImpl::finish_buffers() {
  // Where trace-cmd 3.1.6 places each CPU's data (TraceDatCpu::trace_cmd_size):
  // compressed data is unpacked to offsets of its own, starting at 0 for the
  // top-level buffer and where it ended for every instance (trace-input.c
  // init_cpu_zfile and handle->next_offset, copied into instance handles).
  uint64_t top_end = 0;
  for (size_t b = 0; b < spans_.size(); ++b) {
    uint64_t next = b == 0 ? 0 : top_end;
    for (CpuSpan& c : spans_[b]) {
      if (c.size && (c.offset > file_->size() || c.size > file_->size() - c.offset))
        return error_at(c.offset, fmt::format("cpu {} data: {} bytes exceed file size {} (file truncated?)", c.cpu,
                                              c.size, file_->size()));
      if (c.compressed && c.size) {
        TRACEBED_TRY(scan_chunks(*file_, c, ctx_.endian));
      } else {
        c.data_size = c.size;
      }
      const uint64_t psize = c.page_size ? c.page_size : page_size_;
      uint64_t placed = c.offset;
      if (c.compressed) {
        placed = next;
        next = (next + c.data_size + psize - 1) / psize * psize;
      }
      c.trace_cmd_size = placed % psize == 0 ? c.data_size : std::min<uint64_t>(c.data_size, psize);
      TraceDatCpu cpu{c.cpu, c.offset, c.data_size};
      cpu.trace_cmd_size = c.trace_cmd_size;
      buffers_[b].cpus.push_back(cpu);
    }
    if (b == 0) top_end = next;
  }
  return {};
}

}  // namespace

Result<std::unique_ptr<TraceDat>> TraceDat::open(const std::string& path) {
  auto t = std::make_unique<TraceDatImpl>();
  Status st = t->open(path);
  if (!st.ok()) return st.error().within(path);
  return std::unique_ptr<TraceDat>(std::move(t));
}

}  // namespace tracebed
