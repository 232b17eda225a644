#include "framework/decode/trace_dat_writer.h"

#include "framework/base/files.h"
#include "framework/decode/decompress.h"

#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <cstdio>
#include <memory>

namespace tracebed::decode {
namespace {

constexpr uint8_t kMagic[] = {0x17, 0x08, 0x44};
constexpr uint16_t kSectionCompressed = 1;   // TRACECMD_SEC_FL_COMPRESS

// An append-only byte buffer that writes numbers in the file's byte order
// and can patch a number it wrote earlier.
class Sink {
 public:
  explicit Sink(Endian e) : endian_(e) {}

  size_t size() const { return out_.size(); }
  std::vector<uint8_t>& bytes() { return out_; }

  void u8(uint8_t v) { out_.push_back(v); }
  void u16(uint16_t v) { num(v, 2); }
  void u32(uint32_t v) { num(v, 4); }
  void u64(uint64_t v) { num(v, 8); }
  void raw(Bytes b) { out_.insert(out_.end(), b.begin(), b.end()); }
  void raw(std::string_view s) { out_.insert(out_.end(), s.begin(), s.end()); }
  void cstr(std::string_view s) {
    raw(s);
    u8(0);
  }
  void zeros(size_t n) { out_.resize(out_.size() + n, 0); }
  void align(size_t a) {
    if (size_t r = out_.size() % a) zeros(a - r);
  }
  void patch_u64(size_t at, uint64_t v) { put(out_.data() + at, v, 8); }
  void patch_u32(size_t at, uint32_t v) { put(out_.data() + at, v, 4); }

 private:
  void num(uint64_t v, size_t n) {
    size_t at = out_.size();
    out_.resize(at + n);
    put(out_.data() + at, v, n);
  }
  void put(uint8_t* p, uint64_t v, size_t n) const {
    for (size_t i = 0; i < n; ++i) {
      size_t shift = endian_ == Endian::little ? i : n - 1 - i;
      p[i] = static_cast<uint8_t>(v >> (8 * shift));
    }
  }

  Endian endian_;
  std::vector<uint8_t> out_;
};

// The metadata blocks, identical in v6 and inside v7's sections.
// What both versions start with: the magic, "tracing", the version as
// text, the byte order, the size of a long and the page size.
void put_initial_format(Sink& s, const TraceDatContents& c, std::string_view version) {
  s.raw(Bytes(kMagic, sizeof kMagic));
  s.raw("tracing");
  s.cstr(version);
  s.u8(c.endian == Endian::big ? 1 : 0);
  s.u8(c.long_size);
  s.u32(c.page_size);
}

void put_headers(Sink& s, const TraceDatContents& c) {
  s.cstr("header_page");
  s.u64(c.header_page.size());
  s.raw(c.header_page);
  s.cstr("header_event");
  s.u64(c.header_event.size());
  s.raw(c.header_event);
}

// A count, then each format file with its 8-byte size: the ftrace events,
// and each system's events after its name.
void put_formats(Sink& s, const std::vector<std::string>& formats) {
  s.u32(static_cast<uint32_t>(formats.size()));
  for (const auto& f : formats) {
    s.u64(f.size());
    s.raw(f);
  }
}

void put_ftrace_events(Sink& s, const TraceDatContents& c) { put_formats(s, c.ftrace_formats); }

void put_event_formats(Sink& s, const TraceDatContents& c) {
  s.u32(static_cast<uint32_t>(c.systems.size()));
  for (const auto& sys : c.systems) {
    s.cstr(sys.name);
    put_formats(s, sys.formats);
  }
}

void put_kallsyms(Sink& s, const TraceDatContents& c) {
  s.u32(static_cast<uint32_t>(c.kallsyms.size()));
  s.raw(c.kallsyms);
}

void put_printk(Sink& s, const TraceDatContents& c) {
  s.u32(static_cast<uint32_t>(c.printk_formats.size()));
  s.raw(c.printk_formats);
}

void put_cmdlines(Sink& s, const TraceDatContents& c) {
  s.u64(c.cmdlines.size());
  s.raw(c.cmdlines);
}

void put_option(Sink& s, uint16_t id, Bytes data) {
  s.u16(id);
  s.u32(static_cast<uint32_t>(data.size()));
  s.raw(data);
}

Status check_contents(const TraceDatContents& c, const TraceDatWriteOptions& o) {
  if (o.version != 6 && o.version != 7)
    return Error{fmt::format("trace.dat version {} is not 6 or 7", o.version)};
  if (o.version == 6 && o.compression != TraceDatCompression::none)
    return Error{"trace.dat version 6 cannot be compressed"};
  if (c.long_size != 4 && c.long_size != 8)
    return Error{fmt::format("long size {} is not 4 or 8", c.long_size)};
  if (c.page_size < 4096 || (c.page_size & (c.page_size - 1)))
    return Error{fmt::format("page size {} is not a power of two >= 4096", c.page_size)};
  if (c.buffers.empty() || !c.buffers[0].name.empty())
    return Error{"buffers[0] must be the top-level buffer (empty name)"};
  if (o.pages_per_chunk == 0) return Error{"pages_per_chunk must be at least 1"};
  for (size_t b = 0; b < c.buffers.size(); ++b) {
    const auto& buf = c.buffers[b];
    if (b > 0 && buf.name.empty())
      return Error{fmt::format("buffer {} has no name; only buffers[0] is the top level", b)};
    uint32_t ps = buf.page_size ? buf.page_size : c.page_size;
    if (o.version == 6 && ps != c.page_size)
      return Error{fmt::format("buffer \"{}\": v6 cannot store a sub-buffer size ({}) other than "
                               "the file's ({})", buf.name, ps, c.page_size)};
    if (b == 0 && ps != c.page_size)
      return Error{"the top-level buffer's sub-buffer size is the file's page size"};
    for (const auto& cpu : buf.cpus) {
      if (cpu.pages.size() % ps)
        return Error{fmt::format("buffer \"{}\" cpu {}: {} bytes is not a whole number of {}-byte "
                                 "sub-buffers", buf.name, cpu.cpu, cpu.pages.size(), ps)};
      if (cpu.cpu < 0 || (o.version == 6 && static_cast<uint32_t>(cpu.cpu) >= c.cpu_count))
        return Error{fmt::format("buffer \"{}\": cpu {} outside 0..{}", buf.name, cpu.cpu,
                                 c.cpu_count - 1)};
    }
  }
  return {};
}

const TraceDatCpuData* find_cpu(const TraceDatBufferData& b, int cpu) {
  for (const auto& c : b.cpus)
    if (c.cpu == cpu) return &c;
  return nullptr;
}

Result<std::vector<uint8_t>> write_v6(const TraceDatContents& c) {
  Sink s(c.endian);
  put_initial_format(s, c, "6");
  put_headers(s, c);
  put_ftrace_events(s, c);
  put_event_formats(s, c);
  put_kallsyms(s, c);
  put_printk(s, c);
  put_cmdlines(s, c);
  s.u32(c.cpu_count);

  s.raw(Bytes(reinterpret_cast<const uint8_t*>("options  "), 10));
  for (const auto& o : c.options) put_option(s, o.id, o.data);
  // BUFFER options (instances): u64 offset of the instance's "flyrecord"
  // block, then the name. Offsets are patched once the blocks are placed.
  std::vector<size_t> buffer_offset_at;
  for (size_t b = 1; b < c.buffers.size(); ++b) {
    s.u16(static_cast<uint16_t>(TraceDatOptionId::buffer));
    s.u32(static_cast<uint32_t>(8 + c.buffers[b].name.size() + 1));
    buffer_offset_at.push_back(s.size());
    s.u64(0);
    s.cstr(c.buffers[b].name);
  }
  s.u16(static_cast<uint16_t>(TraceDatOptionId::done));

  // One "flyrecord" table per buffer: (offset, size) per CPU, patched below.
  std::vector<size_t> table_at(c.buffers.size());
  for (size_t b = 0; b < c.buffers.size(); ++b) {
    if (b > 0) s.patch_u64(buffer_offset_at[b - 1], s.size());
    s.raw(Bytes(reinterpret_cast<const uint8_t*>("flyrecord"), 10));
    table_at[b] = s.size();
    s.zeros(16 * size_t{c.cpu_count});
    if (b == 0) {
      std::string clock = c.v6_trace_clock.empty() ? "[" + c.buffers[0].clock + "]"
                                                   : c.v6_trace_clock;
      s.u64(clock.size());
      s.raw(clock);
    }
  }
  for (size_t b = 0; b < c.buffers.size(); ++b) {
    for (uint32_t cpu = 0; cpu < c.cpu_count; ++cpu) {
      s.align(c.page_size);
      const TraceDatCpuData* d = find_cpu(c.buffers[b], static_cast<int>(cpu));
      s.patch_u64(table_at[b] + 16 * cpu, s.size());
      if (d) {
        s.patch_u64(table_at[b] + 16 * cpu + 8, d->pages.size());
        s.raw(d->pages);
      }
    }
  }
  return std::move(s.bytes());
}

class V7Writer {
 public:
  V7Writer(const TraceDatContents& c, const TraceDatWriteOptions& o)
      : c_(c), o_(o), s_(c.endian), compress_(o.compression != TraceDatCompression::none) {}

  Result<std::vector<uint8_t>> write();

 private:
  uint32_t add_string(std::string_view str) {
    uint32_t id = static_cast<uint32_t>(strings_.size());
    strings_.insert(strings_.end(), str.begin(), str.end());
    strings_.push_back('\0');
    return id;
  }

  // A section whose whole payload is one block (compressed if asked).
  Result<uint64_t> section(TraceDatOptionId id, std::string_view desc, bool compress,
                           const std::vector<uint8_t>& payload) {
    uint64_t at = s_.size();
    s_.u16(static_cast<uint16_t>(id));
    s_.u16(compress ? kSectionCompressed : 0);
    s_.u32(add_string(desc));
    if (!compress) {
      s_.u64(payload.size());
      s_.raw(payload);
      return at;
    }
    TRACEBED_ASSIGN_OR_RETURN(auto z, compress_block(o_.compression, payload, o_.level));
    s_.u64(8 + z.size());
    s_.u32(static_cast<uint32_t>(z.size()));
    s_.u32(static_cast<uint32_t>(payload.size()));
    s_.raw(z);
    return at;
  }

  template <typename Fn>
  Result<uint64_t> meta_section(TraceDatOptionId id, std::string_view desc, Fn fill) {
    Sink body(c_.endian);
    fill(body, c_);
    return section(id, desc, compress_, body.bytes());
  }

  struct PlacedCpu {
    int cpu;
    uint64_t offset;
    uint64_t size;
  };

  Status flyrecord(const TraceDatBufferData& b, uint64_t& section_at, std::vector<PlacedCpu>& placed);

  const TraceDatContents& c_;
  const TraceDatWriteOptions& o_;
  Sink s_;
  bool compress_;
  std::vector<char> strings_;
};

Status V7Writer::flyrecord(const TraceDatBufferData& b, uint64_t& section_at,
                           std::vector<PlacedCpu>& placed) {
  uint32_t ps = b.page_size ? b.page_size : c_.page_size;
  size_t align = std::max<size_t>(ps, 4096);
  section_at = s_.size();
  s_.u16(static_cast<uint16_t>(TraceDatOptionId::buffer));
  s_.u16(compress_ ? kSectionCompressed : 0);
  s_.u32(add_string("buffer flyrecord " + b.name));
  size_t size_at = s_.size();
  s_.u64(0);
  size_t body_start = s_.size();
  for (const auto& cpu : b.cpus) {
    if (cpu.pages.empty()) continue;   // trace-cmd lists only CPUs with data
    s_.align(align);
    uint64_t start = s_.size();
    if (!compress_) {
      s_.raw(cpu.pages);
    } else {
      // u32 chunk count, then per chunk: u32 compressed size, u32
      // uncompressed size (whole sub-buffers), data.
      size_t chunk = size_t{o_.pages_per_chunk} * ps;
      size_t count = (cpu.pages.size() + chunk - 1) / chunk;
      s_.u32(static_cast<uint32_t>(count));
      for (size_t off = 0; off < cpu.pages.size(); off += chunk) {
        Bytes in(cpu.pages.data() + off, std::min(chunk, cpu.pages.size() - off));
        TRACEBED_ASSIGN_OR_RETURN(auto z, compress_block(o_.compression, in, o_.level));
        s_.u32(static_cast<uint32_t>(z.size()));
        s_.u32(static_cast<uint32_t>(in.size()));
        s_.raw(z);
      }
    }
    // trace-cmd 3.1.6 records a compressed CPU's size without the leading
    // chunk count (its recorded files end each CPU 4 bytes past offset+size).
    placed.push_back({cpu.cpu, start, s_.size() - start - (compress_ ? 4 : 0)});
  }
  s_.patch_u64(size_at, s_.size() - body_start);
  return {};
}

Result<std::vector<uint8_t>> V7Writer::write() {
  put_initial_format(s_, c_, "7");
  std::string version = o_.compression_version;
  if (version.empty()) {
    if (o_.compression == TraceDatCompression::zstd) version = ZSTD_versionString();
    if (o_.compression == TraceDatCompression::zlib) version = zlibVersion();
  }
  s_.cstr(compression_name(o_.compression));
  s_.cstr(version);
  size_t options_offset_at = s_.size();
  s_.u64(0);

  using Id = TraceDatOptionId;
  TRACEBED_ASSIGN_OR_RETURN(uint64_t headers, meta_section(Id::header_info, "headers", put_headers));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t ftrace,
                            meta_section(Id::ftrace_events, "ftrace events", put_ftrace_events));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t events,
                            meta_section(Id::event_formats, "events format", put_event_formats));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t kallsyms, meta_section(Id::kallsyms, "kallsyms", put_kallsyms));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t printk, meta_section(Id::printk, "printk", put_printk));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t cmdlines,
                            meta_section(Id::cmdlines, "command lines", put_cmdlines));

  // First options section: where the metadata sections are, the caller's
  // options, the CPU count, and DONE pointing at the second options section.
  Sink opts(c_.endian);
  auto ref = [&](Id id, uint64_t offset) {
    Sink v(c_.endian);
    v.u64(offset);
    put_option(opts, static_cast<uint16_t>(id), v.bytes());
  };
  ref(Id::header_info, headers);
  ref(Id::ftrace_events, ftrace);
  ref(Id::event_formats, events);
  ref(Id::kallsyms, kallsyms);
  ref(Id::printk, printk);
  for (const auto& o : c_.options) put_option(opts, o.id, o.data);
  ref(Id::cmdlines, cmdlines);
  {
    Sink v(c_.endian);
    v.u32(c_.cpu_count);
    put_option(opts, static_cast<uint16_t>(Id::cpucount), v.bytes());
  }
  size_t done_in_opts = opts.size() + 6;
  ref(Id::done, 0);
  s_.patch_u64(options_offset_at, s_.size());
  TRACEBED_ASSIGN_OR_RETURN(uint64_t first_options, section(Id::done, "options", false, opts.bytes()));
  size_t done_at = first_options + 16 + done_in_opts;

  // One flyrecord section per buffer, then the BUFFER options describing them.
  Sink buf_opts(c_.endian);
  for (const auto& b : c_.buffers) {
    uint64_t at = 0;
    std::vector<PlacedCpu> placed;
    TRACEBED_TRY(flyrecord(b, at, placed));
    Sink v(c_.endian);
    v.u64(at);
    v.cstr(b.name);
    v.cstr(b.clock);
    v.u32(b.page_size ? b.page_size : c_.page_size);
    v.u32(static_cast<uint32_t>(placed.size()));
    for (const auto& p : placed) {
      v.u32(static_cast<uint32_t>(p.cpu));
      v.u64(p.offset);
      v.u64(p.size);
    }
    put_option(buf_opts, static_cast<uint16_t>(Id::buffer), v.bytes());
  }
  {
    Sink v(c_.endian);
    v.u64(0);
    put_option(buf_opts, static_cast<uint16_t>(Id::done), v.bytes());
  }
  s_.patch_u64(done_at, s_.size());
  TRACEBED_TRY(section(Id::done, "options", false, buf_opts.bytes()));

  // The strings section names every section, itself included; readers find
  // it by walking the section chain from the first section.
  uint32_t own = add_string("strings");
  std::vector<uint8_t> strings(strings_.begin(), strings_.end());
  s_.u16(static_cast<uint16_t>(Id::strings));
  s_.u16(compress_ ? kSectionCompressed : 0);
  s_.u32(own);
  if (compress_) {
    TRACEBED_ASSIGN_OR_RETURN(auto z, compress_block(o_.compression, strings, o_.level));
    s_.u64(8 + z.size());
    s_.u32(static_cast<uint32_t>(z.size()));
    s_.u32(static_cast<uint32_t>(strings.size()));
    s_.raw(z);
  } else {
    s_.u64(strings.size());
    s_.raw(strings);
  }
  return std::move(s_.bytes());
}


// ---- Reading contents back -------------------------------------------------

class ContentsReader {
 public:
  ContentsReader(Bytes file, uint64_t max_decompressed) : file_(file), budget_(max_decompressed) {}

  Result<TraceDatContents> read(TraceDatWriteOptions* format);

 private:
  Result<ByteReader> at(uint64_t offset, std::string_view what) const {
    if (offset > file_.size())
      return error_at(offset, fmt::format("{} lies beyond the end of the file ({} bytes)", what,
                                          file_.size()));
    return ByteReader(file_.subspan(offset), endian_, offset);
  }

  static Result<std::string> text(ByteReader& r, size_t len_size, std::string_view what) {
    TRACEBED_ASSIGN_OR_RETURN(uint64_t n, r.read_uint(len_size, what));
    TRACEBED_ASSIGN_OR_RETURN(Bytes b, r.read_bytes(n, what));
    return std::string(b.begin(), b.end());
  }

  static Status expect(ByteReader& r, std::string_view word, std::string_view what) {
    uint64_t off = r.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(std::string_view got, r.read_cstring(what));
    if (got != word)
      return error_at(off, fmt::format("{}: expected \"{}\", found \"{}\"", what, word, got));
    return {};
  }

  Status headers(ByteReader& r) {
    TRACEBED_TRY(expect(r, "header_page", "header_page tag"));
    TRACEBED_ASSIGN_OR_RETURN(c_.header_page, text(r, 8, "header_page"));
    TRACEBED_TRY(expect(r, "header_event", "header_event tag"));
    TRACEBED_ASSIGN_OR_RETURN(c_.header_event, text(r, 8, "header_event"));
    return {};
  }
  Status ftrace_events(ByteReader& r) {
    TRACEBED_ASSIGN_OR_RETURN(uint32_t n, r.read<uint32_t>("ftrace format count"));
    for (uint32_t i = 0; i < n; ++i) {
      TRACEBED_ASSIGN_OR_RETURN(std::string f, text(r, 8, "ftrace format"));
      c_.ftrace_formats.push_back(std::move(f));
    }
    return {};
  }
  Status event_formats(ByteReader& r) {
    TRACEBED_ASSIGN_OR_RETURN(uint32_t n, r.read<uint32_t>("event system count"));
    for (uint32_t i = 0; i < n; ++i) {
      TraceDatEventSystem sys;
      TRACEBED_ASSIGN_OR_RETURN(std::string_view name, r.read_cstring("event system name"));
      sys.name = name;
      TRACEBED_ASSIGN_OR_RETURN(uint32_t m, r.read<uint32_t>("event format count"));
      for (uint32_t j = 0; j < m; ++j) {
        TRACEBED_ASSIGN_OR_RETURN(std::string f, text(r, 8, "event format"));
        sys.formats.push_back(std::move(f));
      }
      c_.systems.push_back(std::move(sys));
    }
    return {};
  }
  Status kallsyms(ByteReader& r) {
    TRACEBED_ASSIGN_OR_RETURN(c_.kallsyms, text(r, 4, "kallsyms"));
    return {};
  }
  Status printk(ByteReader& r) {
    TRACEBED_ASSIGN_OR_RETURN(c_.printk_formats, text(r, 4, "printk formats"));
    return {};
  }
  Status cmdlines(ByteReader& r) {
    TRACEBED_ASSIGN_OR_RETURN(c_.cmdlines, text(r, 8, "saved cmdlines"));
    return {};
  }

  struct Section {
    uint16_t id = 0;
    uint16_t flags = 0;
    uint64_t offset = 0;     // of the section header
    ByteReader body{Bytes{}};
  };
  // A v7 section at `offset`, its body decompressed if it says so.
  Result<Section> section(uint64_t offset, std::string_view what);

  Result<std::vector<uint8_t>> cpu_data(bool compressed, uint64_t offset, uint64_t size,
                                        std::string_view what);
  Status v7_options(uint64_t offset, int depth);

  // Counts `bytes` of decompressed data against the caller's limit.
  Status spend(uint64_t bytes, uint64_t offset) {
    if (bytes > budget_)
      return error_at(offset, fmt::format("the data decompresses to more than the {} MiB allowed in memory",
                                          (spent_ + budget_) >> 20));
    budget_ -= bytes;
    spent_ += bytes;
    return {};
  }

  Bytes file_;
  uint64_t budget_;
  uint64_t spent_ = 0;
  Endian endian_ = Endian::little;
  TraceDatContents c_;
  TraceDatWriteOptions format_;
  std::vector<std::vector<uint8_t>> owned_;   // decompressed section bodies
  struct V7Buffer {
    TraceDatBufferData data;
    uint64_t section = 0;
    std::vector<std::pair<uint64_t, uint64_t>> places;   // offset, size per CPU
  };
  std::vector<V7Buffer> v7_buffers_;
};

Result<ContentsReader::Section> ContentsReader::section(uint64_t offset, std::string_view what) {
  TRACEBED_ASSIGN_OR_RETURN(ByteReader r, at(offset, what));
  Section s;
  s.offset = offset;
  TRACEBED_ASSIGN_OR_RETURN(s.id, r.read<uint16_t>("section id"));
  TRACEBED_ASSIGN_OR_RETURN(s.flags, r.read<uint16_t>("section flags"));
  TRACEBED_TRY(r.read<uint32_t>("section description"));
  TRACEBED_ASSIGN_OR_RETURN(uint64_t size, r.read<uint64_t>("section size"));
  uint64_t body_at = r.file_offset();
  TRACEBED_ASSIGN_OR_RETURN(Bytes body, r.read_bytes(size, fmt::format("{} section body", what)));
  if (!(s.flags & kSectionCompressed)) {
    s.body = ByteReader(body, endian_, body_at);
    return s;
  }
  ByteReader z(body, endian_, body_at);
  TRACEBED_ASSIGN_OR_RETURN(uint32_t csize, z.read<uint32_t>("compressed size"));
  TRACEBED_ASSIGN_OR_RETURN(uint32_t usize, z.read<uint32_t>("uncompressed size"));
  TRACEBED_ASSIGN_OR_RETURN(Bytes data, z.read_bytes(csize, "compressed data"));
  TRACEBED_TRY(spend(usize, body_at));
  auto out = decompress_block(format_.compression, data, usize);
  if (!out.ok()) return error_at(body_at, fmt::format("{} section: {}", what, out.error().message));
  owned_.push_back(std::move(out).value());
  s.body = ByteReader(owned_.back(), endian_, body_at);
  return s;
}

Result<std::vector<uint8_t>> ContentsReader::cpu_data(bool compressed, uint64_t offset,
                                                      uint64_t size, std::string_view what) {
  TRACEBED_ASSIGN_OR_RETURN(ByteReader r, at(offset, what));
  // Compressed: the recorded size leaves out the u32 chunk count (as trace-cmd writes it).
  TRACEBED_ASSIGN_OR_RETURN(Bytes raw, r.read_bytes(compressed ? size + 4 : size, what));
  if (!compressed) return std::vector<uint8_t>(raw.begin(), raw.end());
  ByteReader z(raw, endian_, offset);
  std::vector<uint8_t> out;
  TRACEBED_ASSIGN_OR_RETURN(uint32_t count, z.read<uint32_t>("chunk count"));
  for (uint32_t i = 0; i < count; ++i) {
    uint64_t chunk_at = z.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(uint32_t csize, z.read<uint32_t>("chunk compressed size"));
    TRACEBED_ASSIGN_OR_RETURN(uint32_t usize, z.read<uint32_t>("chunk uncompressed size"));
    TRACEBED_ASSIGN_OR_RETURN(Bytes data, z.read_bytes(csize, "chunk data"));
    TRACEBED_TRY(spend(usize, chunk_at));
    auto chunk = decompress_block(format_.compression, data, usize);
    if (!chunk.ok())
      return error_at(chunk_at, fmt::format("{} chunk {}: {}", what, i, chunk.error().message));
    out.insert(out.end(), chunk->begin(), chunk->end());
  }
  return out;
}

Status ContentsReader::v7_options(uint64_t offset, int depth) {
  if (depth > 64) return error_at(offset, "options sections chain loops");
  TRACEBED_ASSIGN_OR_RETURN(Section s, section(offset, "options"));
  if (s.id != 0)
    return error_at(offset, fmt::format("expected an options section (id 0), found id {}", s.id));
  using Id = TraceDatOptionId;
  ByteReader& r = s.body;
  while (!r.at_end()) {
    uint64_t opt_at = r.file_offset();
    TRACEBED_ASSIGN_OR_RETURN(uint16_t id, r.read<uint16_t>("option id"));
    TRACEBED_ASSIGN_OR_RETURN(uint32_t size, r.read<uint32_t>("option size"));
    TRACEBED_ASSIGN_OR_RETURN(Bytes data, r.read_bytes(size, "option data"));
    ByteReader d(data, endian_, opt_at + 6);
    switch (static_cast<Id>(id)) {
      case Id::done: {
        TRACEBED_ASSIGN_OR_RETURN(uint64_t next, d.read<uint64_t>("DONE option"));
        if (next) return v7_options(next, depth + 1);
        return {};
      }
      case Id::header_info: case Id::ftrace_events: case Id::event_formats:
      case Id::kallsyms: case Id::printk: case Id::cmdlines: {
        TRACEBED_ASSIGN_OR_RETURN(uint64_t where, d.read<uint64_t>("section offset"));
        TRACEBED_ASSIGN_OR_RETURN(Section m, section(where, "metadata"));
        if (m.id != id)
          return error_at(where, fmt::format("option {} points at a section with id {}", id, m.id));
        Status st;
        switch (static_cast<Id>(id)) {
          case Id::header_info: st = headers(m.body); break;
          case Id::ftrace_events: st = ftrace_events(m.body); break;
          case Id::event_formats: st = event_formats(m.body); break;
          case Id::kallsyms: st = kallsyms(m.body); break;
          case Id::printk: st = printk(m.body); break;
          default: st = cmdlines(m.body); break;
        }
        TRACEBED_TRY(st);
        break;
      }
      case Id::buffer: {
        V7Buffer b;
        TRACEBED_ASSIGN_OR_RETURN(b.section, d.read<uint64_t>("BUFFER offset"));
        TRACEBED_ASSIGN_OR_RETURN(std::string_view name, d.read_cstring("BUFFER name"));
        TRACEBED_ASSIGN_OR_RETURN(std::string_view clock, d.read_cstring("BUFFER clock"));
        b.data.name = name;
        b.data.clock = clock;
        TRACEBED_ASSIGN_OR_RETURN(b.data.page_size, d.read<uint32_t>("BUFFER page size"));
        TRACEBED_ASSIGN_OR_RETURN(uint32_t n, d.read<uint32_t>("BUFFER cpu count"));
        for (uint32_t i = 0; i < n; ++i) {
          TraceDatCpuData cpu;
          TRACEBED_ASSIGN_OR_RETURN(uint32_t id32, d.read<uint32_t>("BUFFER cpu id"));
          TRACEBED_ASSIGN_OR_RETURN(uint64_t off, d.read<uint64_t>("BUFFER cpu offset"));
          TRACEBED_ASSIGN_OR_RETURN(uint64_t sz, d.read<uint64_t>("BUFFER cpu size"));
          cpu.cpu = static_cast<int>(id32);
          b.data.cpus.push_back(std::move(cpu));
          b.places.emplace_back(off, sz);
        }
        v7_buffers_.push_back(std::move(b));
        break;
      }
      case Id::buffer_text:
        return error_at(opt_at, "latency (BUFFER_TEXT) buffers are not supported");
      case Id::cpucount: {
        TRACEBED_ASSIGN_OR_RETURN(c_.cpu_count, d.read<uint32_t>("CPUCOUNT"));
        break;
      }
      default:
        c_.options.push_back({id, std::vector<uint8_t>(data.begin(), data.end())});
        break;
    }
  }
  return error_at(r.file_offset(), "options section ends without a DONE option");
}

Result<TraceDatContents> ContentsReader::read(TraceDatWriteOptions* format) {
  ByteReader r(file_, Endian::little);
  TRACEBED_ASSIGN_OR_RETURN(Bytes magic, r.read_bytes(3, "magic"));
  TRACEBED_ASSIGN_OR_RETURN(Bytes tracing, r.read_bytes(7, "magic"));
  if (!std::equal(magic.begin(), magic.end(), kMagic) ||
      std::string_view(reinterpret_cast<const char*>(tracing.data()), 7) != "tracing")
    return error_at(0, "not a trace.dat file: bad magic");
  TRACEBED_ASSIGN_OR_RETURN(std::string_view version, r.read_cstring("version"));
  if (version != "6" && version != "7")
    return error_at(10, fmt::format("unsupported trace.dat version \"{}\"", version));
  format_.version = version == "6" ? 6 : 7;
  TRACEBED_ASSIGN_OR_RETURN(uint8_t endian, r.read<uint8_t>("endian"));
  endian_ = endian ? Endian::big : Endian::little;
  r.set_endian(endian_);
  c_.endian = endian_;
  TRACEBED_ASSIGN_OR_RETURN(c_.long_size, r.read<uint8_t>("long size"));
  TRACEBED_ASSIGN_OR_RETURN(c_.page_size, r.read<uint32_t>("page size"));

  if (format_.version == 6) {
    TRACEBED_TRY(headers(r));
    TRACEBED_TRY(ftrace_events(r));
    TRACEBED_TRY(event_formats(r));
    TRACEBED_TRY(kallsyms(r));
    TRACEBED_TRY(printk(r));
    TRACEBED_TRY(cmdlines(r));
    TRACEBED_ASSIGN_OR_RETURN(c_.cpu_count, r.read<uint32_t>("cpu count"));
    std::vector<std::pair<std::string, uint64_t>> instances;
    for (;;) {
      uint64_t tag_at = r.file_offset();
      TRACEBED_ASSIGN_OR_RETURN(Bytes tag, r.read_bytes(10, "data type"));
      std::string_view t(reinterpret_cast<const char*>(tag.data()), 9);
      if (t == "flyrecord") break;
      if (t == "latency  ") return error_at(tag_at, "latency files are not supported");
      if (t != "options  ") return error_at(tag_at, "expected \"options\" or \"flyrecord\"");
      for (;;) {
        uint64_t opt_at = r.file_offset();
        TRACEBED_ASSIGN_OR_RETURN(uint16_t id, r.read<uint16_t>("option id"));
        if (id == 0) break;
        TRACEBED_ASSIGN_OR_RETURN(uint32_t size, r.read<uint32_t>("option size"));
        TRACEBED_ASSIGN_OR_RETURN(Bytes data, r.read_bytes(size, "option data"));
        if (id == static_cast<uint16_t>(TraceDatOptionId::buffer)) {
          ByteReader d(data, endian_, opt_at + 6);
          TRACEBED_ASSIGN_OR_RETURN(uint64_t off, d.read<uint64_t>("BUFFER offset"));
          TRACEBED_ASSIGN_OR_RETURN(std::string_view name, d.read_cstring("BUFFER name"));
          instances.emplace_back(std::string(name), off);
        } else {
          c_.options.push_back({id, std::vector<uint8_t>(data.begin(), data.end())});
        }
      }
    }
    auto table = [&](ByteReader& t, TraceDatBufferData& b) -> Status {
      for (uint32_t cpu = 0; cpu < c_.cpu_count; ++cpu) {
        TRACEBED_ASSIGN_OR_RETURN(uint64_t off, t.read<uint64_t>("cpu data offset"));
        TRACEBED_ASSIGN_OR_RETURN(uint64_t size, t.read<uint64_t>("cpu data size"));
        if (!size) continue;
        TraceDatCpuData d;
        d.cpu = static_cast<int>(cpu);
        TRACEBED_ASSIGN_OR_RETURN(d.pages, cpu_data(false, off, size, fmt::format("cpu {} data", cpu)));
        b.cpus.push_back(std::move(d));
      }
      return {};
    };
    TraceDatBufferData top;
    TRACEBED_TRY(table(r, top));
    // trace-cmd follows the table with the trace_clock file (size + text).
    if (r.remaining() >= 8) {
      TRACEBED_ASSIGN_OR_RETURN(c_.v6_trace_clock, text(r, 8, "trace clock"));
    }
    auto clock_of = [](std::string_view s) -> std::string {
      auto open = s.find('[');
      auto close = s.find(']', open == std::string_view::npos ? 0 : open);
      if (open == std::string_view::npos || close == std::string_view::npos) return "local";
      return std::string(s.substr(open + 1, close - open - 1));
    };
    top.clock = clock_of(c_.v6_trace_clock);
    c_.buffers.push_back(std::move(top));
    for (auto& [name, off] : instances) {
      TRACEBED_ASSIGN_OR_RETURN(ByteReader t, at(off, "instance table"));
      TRACEBED_TRY(expect(t, "flyrecord", fmt::format("instance \"{}\"", name)));
      TraceDatBufferData b;
      b.name = name;
      b.clock = c_.buffers[0].clock;
      TRACEBED_TRY(table(t, b));
      c_.buffers.push_back(std::move(b));
    }
    if (format) *format = format_;
    return std::move(c_);
  }

  TRACEBED_ASSIGN_OR_RETURN(std::string_view zname, r.read_cstring("compression name"));
  TRACEBED_ASSIGN_OR_RETURN(std::string_view zversion, r.read_cstring("compression version"));
  if (zname == "none") format_.compression = TraceDatCompression::none;
  else if (zname == "zlib") format_.compression = TraceDatCompression::zlib;
  else if (zname == "zstd") format_.compression = TraceDatCompression::zstd;
  else return error_at(r.file_offset(), fmt::format("unknown compression \"{}\"", zname));
  format_.compression_version = zversion;
  TRACEBED_ASSIGN_OR_RETURN(uint64_t options, r.read<uint64_t>("options offset"));
  TRACEBED_TRY(v7_options(options, 0));
  // The top-level buffer first, instances in file order.
  std::stable_partition(v7_buffers_.begin(), v7_buffers_.end(),
                        [](const V7Buffer& b) { return b.data.name.empty(); });
  if (v7_buffers_.empty() || !v7_buffers_[0].data.name.empty()) {
    V7Buffer top;
    top.data.page_size = c_.page_size;
    v7_buffers_.insert(v7_buffers_.begin(), std::move(top));
  }
  for (auto& b : v7_buffers_) {
    bool compressed = false;
    if (!b.places.empty()) {
      // Only the header: the body is padding and per-CPU chunks, not one block.
      TRACEBED_ASSIGN_OR_RETURN(ByteReader h, at(b.section, "flyrecord section"));
      TRACEBED_ASSIGN_OR_RETURN(uint16_t id, h.read<uint16_t>("section id"));
      TRACEBED_ASSIGN_OR_RETURN(uint16_t flags, h.read<uint16_t>("section flags"));
      if (id != static_cast<uint16_t>(TraceDatOptionId::buffer))
        return error_at(b.section, fmt::format("BUFFER points at a section with id {}", id));
      compressed = flags & kSectionCompressed;
    }
    for (size_t i = 0; i < b.places.size(); ++i) {
      auto [off, size] = b.places[i];
      TRACEBED_ASSIGN_OR_RETURN(
          b.data.cpus[i].pages,
          cpu_data(compressed, off, size, fmt::format("buffer \"{}\" cpu {}", b.data.name,
                                                      b.data.cpus[i].cpu)));
    }
    if (b.data.page_size == c_.page_size) b.data.page_size = 0;
    c_.buffers.push_back(std::move(b.data));
  }
  if (format) *format = format_;
  return std::move(c_);
}

}  // namespace

std::string_view compression_name(TraceDatCompression c) {
  switch (c) {
    case TraceDatCompression::none: return "none";
    case TraceDatCompression::zlib: return "zlib";
    case TraceDatCompression::zstd: return "zstd";
  }
  return "none";
}

TraceDatOption TraceDatOption::text(TraceDatOptionId id, std::string_view s) {
  TraceDatOption o;
  o.id = static_cast<uint16_t>(id);
  o.data.assign(s.begin(), s.end());
  o.data.push_back(0);
  return o;
}

Result<std::vector<uint8_t>> compress_block(TraceDatCompression c, Bytes in, int level) {
  std::vector<uint8_t> out;
  switch (c) {
    case TraceDatCompression::none:
      return std::vector<uint8_t>(in.begin(), in.end());
    case TraceDatCompression::zlib: {
      uLongf n = compressBound(in.size());
      out.resize(n);
      int rc = compress2(out.data(), &n, in.data(), in.size(), level ? level : Z_BEST_COMPRESSION);
      if (rc != Z_OK) return Error{fmt::format("zlib compress2 failed: {}", rc)};
      out.resize(n);
      return out;
    }
    case TraceDatCompression::zstd: {
      std::unique_ptr<ZSTD_CCtx, size_t (*)(ZSTD_CCtx*)> ctx(ZSTD_createCCtx(), ZSTD_freeCCtx);
      if (!ctx) return Error{"zstd: cannot allocate a compression context"};
      // trace-cmd's frames carry no content size; the chunk header has it.
      ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_contentSizeFlag, 0);
      ZSTD_CCtx_setParameter(ctx.get(), ZSTD_c_compressionLevel, level ? level : 3);
      out.resize(ZSTD_compressBound(in.size()));
      size_t n = ZSTD_compress2(ctx.get(), out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(n)) return Error{fmt::format("zstd compress failed: {}", ZSTD_getErrorName(n))};
      out.resize(n);
      return out;
    }
  }
  return Error{"unknown compression"};
}

Result<std::vector<uint8_t>> decompress_block(TraceDatCompression c, Bytes in, size_t out_size) {
  // Sizes come from the file: refuse absurd ones before allocating. trace-cmd's
  // largest blocks are kallsyms sections (a few MB) and 10-sub-buffer chunks.
  constexpr size_t kMaxBlock = size_t{256} << 20;
  if (out_size > kMaxBlock)
    return Error{fmt::format("uncompressed size {} exceeds the {} MiB limit", out_size, kMaxBlock >> 20)};
  if (c == TraceDatCompression::none) return std::vector<uint8_t>(in.begin(), in.end());
  TRACEBED_TRY(check_decompressed_size(c == TraceDatCompression::zlib ? Codec::zlib : Codec::zstd, in, out_size,
                                       "block"));
  std::vector<uint8_t> out(out_size);
  switch (c) {
    case TraceDatCompression::none:
      break;
    case TraceDatCompression::zlib: {
      uLongf n = out_size;
      int rc = uncompress(out.data(), &n, in.data(), in.size());
      if (rc != Z_OK) return Error{fmt::format("zlib uncompress failed: {}", rc)};
      out.resize(n);
      return out;
    }
    case TraceDatCompression::zstd: {
      size_t n = ZSTD_decompress(out.data(), out.size(), in.data(), in.size());
      if (ZSTD_isError(n)) return Error{fmt::format("zstd decompress failed: {}", ZSTD_getErrorName(n))};
      out.resize(n);
      return out;
    }
  }
  return Error{"unknown compression"};
}

Result<std::vector<uint8_t>> write_trace_dat(const TraceDatContents& contents,
                                             const TraceDatWriteOptions& options) {
  TRACEBED_TRY(check_contents(contents, options));
  if (options.version == 6) return write_v6(contents);
  return V7Writer(contents, options).write();
}

Status write_trace_dat_file(const std::string& path, const TraceDatContents& contents,
                            const TraceDatWriteOptions& options) {
  TRACEBED_ASSIGN_OR_RETURN(auto bytes, write_trace_dat(contents, options));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(path.c_str(), "wb"), std::fclose);
  if (!f) return Error{fmt::format("{}: cannot create", path)};
  if (std::fwrite(bytes.data(), 1, bytes.size(), f.get()) != bytes.size())
    return Error{fmt::format("{}: write failed", path)};
  return {};
}

Result<TraceDatContents> read_trace_dat_contents(Bytes file, TraceDatWriteOptions* format,
                                                 uint64_t max_decompressed) {
  return ContentsReader(file, max_decompressed).read(format);
}

Result<TraceDatContents> read_trace_dat_contents_file(const std::string& path,
                                                      TraceDatWriteOptions* format) {
  TRACEBED_ASSIGN_OR_RETURN(std::string bytes, base::read_file(path));
  auto r = read_trace_dat_contents(Bytes(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()), format);
  if (!r.ok()) return r.error().within(path);
  return r;
}

}  // namespace tracebed::decode
