#include "framework/vm/elf_libraries.h"

#include <deque>
#include <fstream>
#include <set>

#include "framework/base/bytes.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

namespace {

// include/uapi/linux/elf.h
constexpr uint32_t kPtLoad = 1, kPtDynamic = 2, kPtInterp = 3;
constexpr int64_t kDtNull = 0, kDtNeeded = 1, kDtStrtab = 5, kDtStrsz = 10;
constexpr size_t kEhdrSize = 64, kPhdrSize = 56, kDynSize = 16;

struct Segment {
  uint32_t type;
  uint64_t offset, vaddr, filesz;
};

// `size` bytes at `offset` lie inside a file of `file_size` bytes.
bool inside(uint64_t offset, uint64_t size, size_t file_size) {
  return offset <= file_size && size <= file_size - offset;
}

// A string at `offset`, ending at a NUL before `end`.
Result<std::string> c_string(std::span<const uint8_t> b, uint64_t offset, uint64_t end, std::string_view what) {
  if (offset >= end || end > b.size()) return error_at(offset, fmt::format("{} lies outside the file", what));
  for (uint64_t i = offset; i < end; ++i)
    if (b[i] == 0) return std::string(reinterpret_cast<const char*>(b.data() + offset), i - offset);
  return error_at(offset, fmt::format("{} has no terminating NUL", what));
}

}  // namespace

Result<ElfDynamic> read_elf_dynamic(std::span<const uint8_t> b) {
  if (b.size() < kEhdrSize || b[0] != 0x7f || b[1] != 'E' || b[2] != 'L' || b[3] != 'F')
    return error_at(0, "not an ELF file (no \\x7fELF magic)");
  if (b[4] != 2) return error_at(4, fmt::format("ELF class {} is not ELFCLASS64", b[4]));
  if (b[5] != 1) return error_at(5, fmt::format("ELF data encoding {} is not little-endian", b[5]));
  const Endian le = Endian::little;
  uint64_t phoff = load<uint64_t>(b.data() + 0x20, le);
  uint16_t phentsize = load<uint16_t>(b.data() + 0x36, le);
  uint16_t phnum = load<uint16_t>(b.data() + 0x38, le);
  if (phnum > 0 && phentsize < kPhdrSize)
    return error_at(0x36, fmt::format("program header size {} is smaller than {}", phentsize, kPhdrSize));
  std::vector<Segment> segments;
  for (uint16_t i = 0; i < phnum; ++i) {
    uint64_t at = phoff + uint64_t{i} * phentsize;
    if (!inside(at, kPhdrSize, b.size()))
      return error_at(at, fmt::format("program header {} of {} reaches past the end of the file ({} bytes)", i, phnum,
                                      b.size()));
    const uint8_t* p = b.data() + at;
    segments.push_back({load<uint32_t>(p, le), load<uint64_t>(p + 8, le), load<uint64_t>(p + 0x10, le),
                        load<uint64_t>(p + 0x20, le)});
  }
  ElfDynamic out;
  const Segment* dynamic = nullptr;
  for (const auto& s : segments) {
    if (!inside(s.offset, s.filesz, b.size()) && (s.type == kPtInterp || s.type == kPtDynamic))
      return error_at(s.offset, fmt::format("segment of type {} ({} bytes) reaches past the end of the file", s.type,
                                            s.filesz));
    if (s.type == kPtInterp) {
      TRACEBED_ASSIGN_OR_RETURN(out.interpreter, c_string(b, s.offset, s.offset + s.filesz, "PT_INTERP"));
    } else if (s.type == kPtDynamic) {
      dynamic = &s;
    }
  }
  if (!dynamic) return out;  // static
  std::optional<uint64_t> strtab, strsz;
  std::vector<std::pair<uint64_t, uint64_t>> needed;  // (string offset, entry offset)
  for (uint64_t at = dynamic->offset; at + kDynSize <= dynamic->offset + dynamic->filesz; at += kDynSize) {
    auto tag = load<int64_t>(b.data() + at, le);
    uint64_t val = load<uint64_t>(b.data() + at + 8, le);
    if (tag == kDtNull) break;
    if (tag == kDtNeeded) needed.emplace_back(val, at);
    if (tag == kDtStrtab) strtab = val;
    if (tag == kDtStrsz) strsz = val;
  }
  if (needed.empty()) return out;
  if (!strtab || !strsz) return error_at(dynamic->offset, "DT_NEEDED without DT_STRTAB and DT_STRSZ");
  // DT_STRTAB is an address: the PT_LOAD segment holding it gives its offset.
  std::optional<uint64_t> str_offset;
  for (const auto& s : segments) {
    if (s.type == kPtLoad && *strtab >= s.vaddr && *strtab - s.vaddr < s.filesz) {
      str_offset = s.offset + (*strtab - s.vaddr);
      break;
    }
  }
  if (!str_offset)
    return error_at(dynamic->offset, fmt::format("DT_STRTAB {:#x} is in no PT_LOAD segment", *strtab));
  if (!inside(*str_offset, *strsz, b.size()))
    return error_at(*str_offset, fmt::format("the dynamic string table ({} bytes) reaches past the end of the file",
                                             *strsz));
  for (const auto& [name, at] : needed) {
    if (name >= *strsz) return error_at(at, fmt::format("DT_NEEDED name {} is outside DT_STRSZ {}", name, *strsz));
    TRACEBED_ASSIGN_OR_RETURN(std::string s, c_string(b, *str_offset + name, *str_offset + *strsz, "DT_NEEDED name"));
    out.needed.push_back(std::move(s));
  }
  return out;
}

Result<ElfDynamic> read_elf_dynamic(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Error{fmt::format("{}: cannot open", file.string())};
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  auto r = read_elf_dynamic(std::span<const uint8_t>(bytes));
  if (!r) return r.error().within(file.string());
  return r;
}

bool is_elf_file(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, 4) && magic[0] == 0x7f && magic[1] == 'E' && magic[2] == 'L' && magic[3] == 'F';
}

Result<LibraryClosure> library_closure(
    const fs::path& program, const std::function<std::optional<fs::path>(const std::string&)>& find) {
  LibraryClosure out;
  TRACEBED_ASSIGN_OR_RETURN(ElfDynamic top, read_elf_dynamic(program));
  std::deque<std::pair<std::string, fs::path>> todo;  // (soname, who needs it)
  std::set<std::string> queued;
  if (!top.interpreter.empty()) {
    out.interpreter = fs::path(top.interpreter).filename().string();
    todo.emplace_back(out.interpreter, program);
    queued.insert(out.interpreter);
  }
  for (const auto& n : top.needed)
    if (queued.insert(n).second) todo.emplace_back(n, program);
  while (!todo.empty()) {
    auto [soname, needer] = todo.front();
    todo.pop_front();
    auto file = find(soname);
    if (!file) {
      out.missing.emplace(soname, needer);
      continue;
    }
    out.libraries.emplace(soname, *file);
    TRACEBED_ASSIGN_OR_RETURN(ElfDynamic lib, read_elf_dynamic(*file));
    for (const auto& n : lib.needed)
      if (queued.insert(n).second) todo.emplace_back(n, *file);
  }
  return out;
}

}  // namespace tracebed::vm
