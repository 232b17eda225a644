// What the trace.dat reader's files share, private to them (trace_dat.h is
// the API). trace.dat v6 and v7 as in trace-cmd's trace-cmd.dat.v6.5 /
// trace-cmd.dat.v7.5 man pages and what trace-cmd 3.1.6 writes and reads in
// lib/trace-cmd/trace-input.c.
//
//   trace_dat.cc            open: the file header, buffers, streams, latency text
//   trace_dat_options.cc    one option's payload into Options
//   trace_dat_v6.cc         v6: metadata read in order from the file
//   trace_dat_v7.cc         v7: sections, the option chain, buffer sections
//   trace_dat_kallsyms.cc   kallsyms, left in the file until first looked up
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "framework/decode/decompress.h"
#include "framework/decode/merge.h"
#include "framework/decode/trace_dat.h"

namespace tracebed::decode::trace_dat {

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

inline std::string_view as_text(Bytes b) { return std::string_view(reinterpret_cast<const char*>(b.data()), b.size()); }

// Text of an option up to its first NUL.
inline std::string option_text(Bytes b) {
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

// A u32 count of items of at least `min_size` bytes each; a count the
// bytes left cannot hold is refused before anything is read for it.
// `system`, when given, is named in the error.
template <typename R>
Result<uint32_t> read_count(R& r, std::string_view what, uint64_t min_size, std::string_view system = {}) {
  const uint64_t at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(uint32_t count, r.template read<uint32_t>(what));
  if (count > r.remaining() / min_size) {
    const std::string prefix = system.empty() ? "" : fmt::format("system {}: ", system);
    return error_at(at, fmt::format("{}{} {} cannot fit in the {} bytes left", prefix, what, count, r.remaining()));
  }
  return count;
}

// Format files: a u64 size and the text, so at least 8 bytes each.
template <typename R>
Status read_formats(R& r, Sink& s, std::string_view system, std::string_view what, std::string_view named = {}) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t count, read_count(r, what, 8, named));
  for (uint32_t i = 0; i < count; ++i) TRACEBED_TRY(read_format(r, s, system, i));
  return {};
}

template <typename R>
Status read_ftrace_formats(R& r, Sink& s) {
  return read_formats(r, s, "ftrace", "ftrace format count");
}

// Systems: a name (at least its NUL) and a u32 count, at least 5 bytes.
template <typename R>
Status read_event_systems(R& r, Sink& s) {
  TRACEBED_ASSIGN_OR_RETURN(uint32_t systems, read_count(r, "event system count", 5));
  for (uint32_t i = 0; i < systems; ++i) {
    TRACEBED_ASSIGN_OR_RETURN(std::string_view name_view, r.read_cstring("event system name"));
    const std::string name(name_view);
    TRACEBED_TRY(read_formats(r, s, name, "event format count", name));
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
  std::string cpu_stats;                  // CPUSTAT payloads, as trace-cmd joins them
  std::optional<uint32_t> cpu_count;
  std::vector<BufferOption> buffers;
  std::map<uint16_t, uint64_t> sections;  // v7: section offsets by id
  uint64_t next_options = 0;              // v7: DONE's pointer
  bool done = false;
};

// Applies option `id` (its payload `data`, which starts at file offset `at`)
// to `o`; `version` is the file's (BUFFER options differ).
Status parse_option(uint16_t id, Bytes data, uint64_t at, Endian e, int version, Options& o);

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
  void set_user_time(int64_t offset, uint64_t hz) override {
    user_ts_offset_ = offset;
    user_hz_ = hz;
  }
  bool uses_trace_clock() const override { return opts_.use_trace_clock && user_hz_ == 0; }
  const std::string& cpu_stats() const override { return opts_.cpu_stats; }
  Status for_each_stored_event_format(
      const std::function<void(std::string_view system, std::string_view text)>& visit) override;
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

  Result<std::unique_ptr<EventStream>> stream(std::optional<std::set<int>> cpus, bool as_trace_cmd);
  void set_decompress_ahead(std::optional<bool> on) override { decompress_ahead_ = on; }
  void set_map_file(bool on) override { map_file_ = on; }

  Result<std::string> latency_text() override;

  Status open(const std::string& path);

 private:
  Status read_header(FileCursor& c);
  Status read_v6(FileCursor& c);
  Status read_v7(uint64_t options_offset);
  Status read_v6_options(FileCursor& c, Options& into);
  Status read_v6_instances(uint32_t cpus);
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
  uint64_t event_systems_offset_ = 0;  // v6: where the event systems start
  int64_t user_ts_offset_ = 0;         // set_user_time
  uint64_t user_hz_ = 0;
};

}  // namespace tracebed::decode::trace_dat
