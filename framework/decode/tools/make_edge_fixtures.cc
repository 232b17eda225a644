// make_edge_fixtures: the edge-case trace.dat files of fixtures/edge and the
// corrupt inputs of fixtures/corrupt, written by our page and trace.dat
// writers from real tracefs files (fixtures/edge/inputs). Everything is
// deterministic: fixed time stamps and a fixed-seed mt19937_64 (whose output
// the C++ standard specifies), so regenerating gives the same bytes for the
// same zlib/zstd versions. Expected outputs are not made here:
// fixtures/edge/regenerate.sh runs Debian's `trace-cmd report` on the files.
//
//   make_edge_fixtures extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] [--printk N]
//       Copies a trace.dat's metadata into tracefs-like files under OUTDIR.
//   make_edge_fixtures generate INPUTS EDGE_DIR CORRUPT_DIR
//       Writes every fixture.
#include "framework/decode/tools/edge_fixture_kit.h"

namespace tracebed::decode::edge {
namespace {

// ---- extract ----------------------------------------------------------------

int extract(int argc, char** argv) {
  if (argc < 4) die("usage: extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] [--printk N]");
  fs::path out = argv[3];
  std::optional<std::set<std::string>> systems, symbols;
  size_t printk_lines = SIZE_MAX;
  for (int i = 4; i + 1 < argc; i += 2) {
    std::string opt = argv[i];
    auto list = split(argv[i + 1], ',');
    if (opt == "--systems") systems = std::set<std::string>(list.begin(), list.end());
    else if (opt == "--symbols") symbols = std::set<std::string>(list.begin(), list.end());
    else if (opt == "--printk") printk_lines = std::stoul(argv[i + 1]);
    else die("unknown option " + opt);
  }
  auto c = must(read_trace_dat_contents_file(argv[2]));
  write_bytes(out / "header_page", c.header_page);
  write_bytes(out / "header_event", c.header_event);
  for (const auto& f : c.ftrace_formats) write_bytes(out / "ftrace" / (format_name(f) + ".format"), f);
  for (const auto& sys : c.systems) {
    if (systems && !systems->count(sys.name)) continue;
    for (const auto& f : sys.formats)
      write_bytes(out / "events" / sys.name / (format_name(f) + ".format"), f);
  }
  std::string kallsyms;
  for (const auto& line : split(c.kallsyms, '\n')) {
    auto fields = split(line, ' ');
    if (!symbols || (fields.size() >= 3 && symbols->count(fields[2]))) kallsyms += line + "\n";
  }
  write_bytes(out / "kallsyms", kallsyms);
  std::string printk;
  size_t n = 0;
  for (const auto& line : split(c.printk_formats, '\n'))
    if (n++ < printk_lines) printk += line + "\n";
  write_bytes(out / "printk_formats", printk);
  write_bytes(out / "saved_cmdlines", c.cmdlines);
  for (const auto& o : c.options) {
    std::string text(o.data.begin(), o.data.end());
    if (!text.empty() && text.back() == '\0') text.pop_back();
    if (o.id == static_cast<uint16_t>(TraceDatOptionId::uname)) write_bytes(out / "uname", text);
    if (o.id == static_cast<uint16_t>(TraceDatOptionId::traceclock)) write_bytes(out / "trace_clock", text);
  }
  return 0;
}

std::vector<uint8_t> written(const Output& o) {
  TraceDatWriteOptions w;
  w.version = o.version;
  w.compression = o.compression;
  return must(write_trace_dat(o.contents, w));
}

// ---- corrupt inputs -----------------------------------------------------------

void put_le(std::vector<uint8_t>& b, size_t at, uint64_t v, size_t n) {
  for (size_t i = 0; i < n; ++i) b.at(at + i) = static_cast<uint8_t>(v >> (8 * i));
}
uint64_t get_le(const std::vector<uint8_t>& b, size_t at, size_t n) {
  uint64_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= uint64_t{b.at(at + i)} << (8 * i);
  return v;
}

// Offsets of a v7 file's sections, in file order (id, header offset).
std::vector<std::pair<uint16_t, size_t>> v7_sections(const std::vector<uint8_t>& b) {
  size_t at = 10;
  while (b.at(at)) ++at;   // version string
  at += 1 + 2 + 4;         // NUL, endian, long size, page size
  while (b.at(at)) ++at;   // compression name
  ++at;
  while (b.at(at)) ++at;   // compression version
  at += 1 + 8;
  std::vector<std::pair<uint16_t, size_t>> out;
  while (at + 16 <= b.size()) {
    out.emplace_back(static_cast<uint16_t>(get_le(b, at, 2)), at);
    at += 16 + get_le(b, at + 8, 8);
  }
  return out;
}

size_t section_of(const std::vector<uint8_t>& b, uint16_t id) {
  for (auto [sid, at] : v7_sections(b))
    if (sid == id) return at;
  die(fmt::format("no section {}", id));
}

void corrupt_fixtures(const fs::path& dir, const Output& v7none, const Output& v7zstd,
                      const Output& v6, const Inputs& k612) {
  auto none = written(v7none);
  auto zstd = written(v7zstd);
  auto old = written(v6);

  write_bytes(dir / "empty.dat", std::string());
  write_bytes(dir / "truncated-header.dat", std::vector<uint8_t>(none.begin(), none.begin() + 20));
  write_bytes(dir / "truncated-v7none.dat",
              std::vector<uint8_t>(none.begin(), none.begin() + none.size() * 6 / 10));
  write_bytes(dir / "truncated-v6.dat", std::vector<uint8_t>(old.begin(), old.begin() + old.size() / 2));
  {
    auto b = none;
    b[0] = 0x18;
    write_bytes(dir / "bad-magic.dat", b);
  }
  {
    auto b = none;
    b[10] = '9';
    write_bytes(dir / "bad-version.dat", b);
  }
  {
    // The event-formats section claims more bytes than the file holds.
    auto b = none;
    put_le(b, section_of(b, 18) + 8, 0x7fffff00, 8);
    write_bytes(dir / "bad-section-size-v7none.dat", b);
  }
  {
    // The first options section offset points past the end.
    auto b = none;
    size_t at = 10 + 2 + 2 + 4 + 5 + 1;   // "7\0", endian, long, page size, "none\0", "\0"
    put_le(b, at, b.size() + 4096, 8);
    write_bytes(dir / "bad-options-offset-v7none.dat", b);
  }
  {
    // The last DONE option points back at its own options section.
    auto b = none;
    auto secs = v7_sections(b);
    size_t second_options = 0;
    for (auto [id, at] : secs)
      if (id == 0) second_options = at;
    size_t body_end = second_options + 16 + get_le(b, second_options + 8, 8);
    put_le(b, body_end - 8, second_options, 8);
    write_bytes(dir / "options-loop-v7none.dat", b);
  }
  {
    // Garbage inside CPU 0's first compressed chunk.
    auto b = zstd;
    size_t fly = section_of(b, 3);
    size_t cpu0 = (fly + 16 + 4095) & ~size_t{4095};
    for (size_t i = 0; i < 64; ++i) b.at(cpu0 + 12 + 16 + i) ^= 0x5a;
    write_bytes(dir / "bad-chunk-data-v7zstd.dat", b);
  }
  {
    // CPU 0's first chunk claims a compressed size beyond the file.
    auto b = zstd;
    size_t fly = section_of(b, 3);
    size_t cpu0 = (fly + 16 + 4095) & ~size_t{4095};
    put_le(b, cpu0 + 4, 0x40000000, 4);
    write_bytes(dir / "bad-chunk-size-v7zstd.dat", b);
  }
  {
    // The headers section's compressed block is damaged.
    auto b = zstd;
    size_t h = section_of(b, 16);
    for (size_t i = 0; i < 16; ++i) b.at(h + 16 + 8 + 4 + i) ^= 0xff;
    write_bytes(dir / "bad-section-block-v7zstd.dat", b);
  }
  {
    // A sub-buffer whose commit exceeds the page, and one whose type_len 0
    // event length runs past the commit.
    auto c = base(k612, 4096, 1);
    Gen g{k612};
    g.marker_ip = symbol_address(k612.kallsyms, "tracing_mark_write");
    SubBufferLayout l{Endian::little, 8, 4096};
    SubBufferWriter a(l, 1'000'000'000);
    must(a.event(0, g.marker(kTasks[0], "commit says 8000 bytes\n")));
    a.override_commit(8000);
    SubBufferWriter b(l, 1'000'100'000);
    must(b.event(0, g.marker(kTasks[0], std::string(150, 'x'))));
    auto page_b = b.finish();
    put_le(page_b, 16 + 4, 100000, 4);   // array[0] of the first (type_len 0) event
    std::vector<uint8_t> pages = a.finish();
    append(pages, page_b);
    add_cpu(c.buffers[0], 0, std::move(pages));
    TraceDatWriteOptions w;
    write_bytes(dir / "bad-page-v7none.dat", must(write_trace_dat(c, w)));
  }
  {
    // Foreign files: a PNG (signature + IHDR) and an x86-64 ELF header.
    const uint8_t png[] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n', 0, 0, 0, 13, 'I', 'H', 'D', 'R',
                           0, 0, 0, 1, 0, 0, 0, 1, 8, 6, 0, 0, 0, 0x1f, 0x15, 0xc4, 0x89};
    write_bytes(dir / "foreign-png.dat", std::vector<uint8_t>(std::begin(png), std::end(png)));
    std::vector<uint8_t> elf(64, 0);
    const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 0};
    std::copy(std::begin(ident), std::end(ident), elf.begin());
    put_le(elf, 16, 2, 2);      // ET_EXEC
    put_le(elf, 18, 62, 2);     // EM_X86_64
    put_le(elf, 20, 1, 4);      // EV_CURRENT
    put_le(elf, 52, 64, 2);     // e_ehsize
    write_bytes(dir / "foreign-elf.dat", elf);
  }
}

int generate(int argc, char** argv) {
  if (argc != 5) die("usage: generate INPUTS EDGE_DIR CORRUPT_DIR");
  fs::path inputs = argv[2], edge = argv[3], corrupt = argv[4];
  Inputs k612 = load_inputs(inputs / "k6.12");
  Inputs i386 = load_inputs(inputs / "k6.12-i386", &k612);
  Inputs k612_64k = load_inputs(inputs / "k6.12-subbuf64k", &k612);
  auto fixtures = edge_fixtures(k612, i386, k612_64k);
  const Output* v7none = nullptr;
  const Output* v7zstd = nullptr;
  const Output* v6 = nullptr;
  for (const auto& f : fixtures) {
    write_bytes(edge / (f.name + ".dat"), written(f));
    std::printf("%s\n", f.name.c_str());
    if (f.name == "e11-formats-v7none") v7none = &f;
    if (f.name == "e11-formats-v7zstd") v7zstd = &f;
    if (f.name == "e11-formats-v6") v6 = &f;
  }
  corrupt_fixtures(corrupt, *v7none, *v7zstd, *v6, k612);
  return 0;
}

}  // namespace
}  // namespace tracebed::decode::edge

int main(int argc, char** argv) {
  std::string cmd = argc > 1 ? argv[1] : "";
  if (cmd == "extract") return tracebed::decode::edge::extract(argc, argv);
  if (cmd == "generate") return tracebed::decode::edge::generate(argc, argv);
  std::fprintf(stderr,
               "usage: make_edge_fixtures extract IN.dat OUTDIR [--systems a,b] [--symbols a,b] "
               "[--printk N]\n"
               "       make_edge_fixtures generate INPUTS EDGE_DIR CORRUPT_DIR\n");
  return 2;
}
