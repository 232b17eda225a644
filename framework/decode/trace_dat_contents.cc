// Reading a trace.dat back into the TraceDatContents the writer takes
// (trace_dat_writer.h read_trace_dat_contents): every block and option as
// it is in the file, so that a file can be written again with a change.
#include "framework/decode/trace_dat_writer.h"

#include "framework/base/files.h"
#include "framework/decode/decompress.h"

#include <algorithm>

namespace tracebed::decode {
namespace {

class ContentsReader {
 public:
  ContentsReader(Bytes file, uint64_t max_decompressed) : file_(file), budget_(max_decompressed) {}

  Result<TraceDatContents> read(TraceDatWriteOptions* format);

 private:
  Status read_v6(ByteReader& r);
  Result<std::vector<std::pair<std::string, uint64_t>>> v6_options(ByteReader& r);
  Status read_v7(ByteReader& r);
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
  if (!(s.flags & kTraceDatSectionCompressed)) {
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
  if (!std::equal(magic.begin(), magic.end(), kTraceDatMagic) ||
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
    TRACEBED_TRY(read_v6(r));
  } else {
    TRACEBED_TRY(read_v7(r));
  }
  if (format) *format = format_;
  return std::move(c_);
}

// v6: the options blocks up to "flyrecord"; the instances' BUFFER options
// (name, offset of their table) are kept apart from the others.
Result<std::vector<std::pair<std::string, uint64_t>>> ContentsReader::v6_options(ByteReader& r) {
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
  return instances;
}

// v6: the metadata in file order, the options, then the top buffer's CPU
// table, its trace_clock and each instance's table.
Status ContentsReader::read_v6(ByteReader& r) {
  TRACEBED_TRY(headers(r));
  TRACEBED_TRY(ftrace_events(r));
  TRACEBED_TRY(event_formats(r));
  TRACEBED_TRY(kallsyms(r));
  TRACEBED_TRY(printk(r));
  TRACEBED_TRY(cmdlines(r));
  TRACEBED_ASSIGN_OR_RETURN(c_.cpu_count, r.read<uint32_t>("cpu count"));
  TRACEBED_ASSIGN_OR_RETURN(auto instances, v6_options(r));
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
  return {};
}

// v7: the compression, the option chain, then each buffer's CPU data.
Status ContentsReader::read_v7(ByteReader& r) {
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
      compressed = flags & kTraceDatSectionCompressed;
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
  return {};
}

}  // namespace

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
