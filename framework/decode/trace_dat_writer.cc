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
  s.raw(Bytes(kTraceDatMagic, sizeof kTraceDatMagic));
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
  Status buffers(size_t done_at);
  Status strings_section();

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
    s_.u16(compress ? kTraceDatSectionCompressed : 0);
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
  s_.u16(compress_ ? kTraceDatSectionCompressed : 0);
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

  TRACEBED_TRY(buffers(done_at));
  TRACEBED_TRY(strings_section());
  return std::move(s_.bytes());
}

// One flyrecord section per buffer, then the second options section: the
// BUFFER options describing them, whose place the first one's DONE at
// done_at points to.
Status V7Writer::buffers(size_t done_at) {
  using Id = TraceDatOptionId;
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

  return {};
}

// The strings section names every section, itself included; readers find
// it by walking the section chain from the first section.
Status V7Writer::strings_section() {
  uint32_t own = add_string("strings");
  std::vector<uint8_t> strings(strings_.begin(), strings_.end());
  s_.u16(static_cast<uint16_t>(TraceDatOptionId::strings));
  s_.u16(compress_ ? kTraceDatSectionCompressed : 0);
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
  return {};
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

}  // namespace tracebed::decode
