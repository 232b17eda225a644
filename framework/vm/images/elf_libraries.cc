#include "framework/vm/images/elf_libraries.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cstddef>
#include <cstring>
#include <deque>
#include <memory>
#include <set>

#include "framework/base/files.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

namespace {

using ElfHandle = std::unique_ptr<Elf, int (*)(Elf*)>;

std::string libelf_error() {
  const char* e = elf_errmsg(-1);
  return e ? e : "unknown libelf error";
}

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

// The image as libelf sees it, checked to be what the loader of an x86-64
// program reads: ELFCLASS64, little-endian, a whole ELF header.
Result<ElfHandle> open_elf64(std::span<const uint8_t> b) {
  if (elf_version(EV_CURRENT) == EV_NONE) return Error{fmt::format("libelf: {}", libelf_error())};
  // elf_memory only reads the image; its signature predates const.
  ElfHandle elf(elf_memory(const_cast<char*>(reinterpret_cast<const char*>(b.data())), b.size()), elf_end);
  if (!elf) return error_at(0, fmt::format("libelf: {}", libelf_error()));
  if (elf_kind(elf.get()) != ELF_K_ELF) {
    if (b.size() < SELFMAG || std::memcmp(b.data(), ELFMAG, SELFMAG) != 0)
      return error_at(0, "not an ELF file (no \\x7fELF magic)");
    return error_at(EI_CLASS, "an ELF identification libelf does not read (bad class, data encoding or version)");
  }
  const int elf_class = gelf_getclass(elf.get());
  if (elf_class != ELFCLASS64) return error_at(EI_CLASS, fmt::format("ELF class {} is not ELFCLASS64", elf_class));
  const char* ident = elf_getident(elf.get(), nullptr);
  if (!ident || ident[EI_DATA] != ELFDATA2LSB)
    return error_at(EI_DATA, fmt::format("ELF data encoding {} is not little-endian", ident ? ident[EI_DATA] : 0));
  if (b.size() < sizeof(Elf64_Ehdr))
    return error_at(0, fmt::format("the ELF header needs {} bytes, the file has {}", sizeof(Elf64_Ehdr), b.size()));
  return elf;
}

// The program headers, after checking that the table lies inside the file:
// libelf shortens a table that does not rather than failing.
Result<std::vector<GElf_Phdr>> program_headers(Elf* elf, size_t file_size) {
  GElf_Ehdr ehdr;
  if (!gelf_getehdr(elf, &ehdr)) return error_at(0, fmt::format("ELF header: {}", libelf_error()));
  // e_phnum, unless it overflowed into section 0 (PN_XNUM): libelf's own
  // count is cut to what fits in the file.
  size_t phnum = ehdr.e_phnum;
  if (phnum == PN_XNUM && elf_getphdrnum(elf, &phnum) != 0)
    return error_at(0, fmt::format("program header count: {}", libelf_error()));
  if (phnum > 0 && ehdr.e_phentsize != sizeof(Elf64_Phdr))
    return error_at(offsetof(Elf64_Ehdr, e_phentsize),
                    fmt::format("program header size {} is not {}", ehdr.e_phentsize, sizeof(Elf64_Phdr)));
  std::vector<GElf_Phdr> out(phnum);
  for (size_t i = 0; i < phnum; ++i) {
    uint64_t at = ehdr.e_phoff + i * sizeof(Elf64_Phdr);
    if (!inside(at, sizeof(Elf64_Phdr), file_size))
      return error_at(at, fmt::format("program header {} of {} reaches past the end of the file ({} bytes)", i, phnum,
                                      file_size));
    if (!gelf_getphdr(elf, static_cast<int>(i), &out[i]))
      return error_at(at, fmt::format("program header {}: {}", i, libelf_error()));
  }
  return out;
}

// DT_NEEDED string offsets (with where each entry is), DT_STRTAB and DT_STRSZ.
struct DynamicEntries {
  std::vector<std::pair<uint64_t, uint64_t>> needed;  // (string offset, entry offset)
  std::optional<uint64_t> strtab, strsz;
};

Result<DynamicEntries> dynamic_entries(Elf* elf, const GElf_Phdr& dynamic) {
  DynamicEntries out;
  const size_t entry_size = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
  const size_t count = dynamic.p_filesz / entry_size;
  if (count == 0) return out;
  Elf_Data* data = elf_getdata_rawchunk(elf, static_cast<int64_t>(dynamic.p_offset), count * entry_size, ELF_T_DYN);
  if (!data) return error_at(dynamic.p_offset, fmt::format("the dynamic section: {}", libelf_error()));
  for (size_t i = 0; i < count; ++i) {
    GElf_Dyn dyn;
    if (!gelf_getdyn(data, static_cast<int>(i), &dyn)) break;
    if (dyn.d_tag == DT_NULL) break;
    if (dyn.d_tag == DT_NEEDED) out.needed.emplace_back(dyn.d_un.d_val, dynamic.p_offset + i * entry_size);
    if (dyn.d_tag == DT_STRTAB) out.strtab = dyn.d_un.d_ptr;
    if (dyn.d_tag == DT_STRSZ) out.strsz = dyn.d_un.d_val;
  }
  return out;
}

}  // namespace

Result<ElfDynamic> read_elf_dynamic(std::span<const uint8_t> b) {
  TRACEBED_ASSIGN_OR_RETURN(ElfHandle elf, open_elf64(b));
  TRACEBED_ASSIGN_OR_RETURN(std::vector<GElf_Phdr> segments, program_headers(elf.get(), b.size()));
  ElfDynamic out;
  const GElf_Phdr* dynamic = nullptr;
  for (const auto& s : segments) {
    if (s.p_type != PT_INTERP && s.p_type != PT_DYNAMIC) continue;
    if (!inside(s.p_offset, s.p_filesz, b.size()))
      return error_at(s.p_offset, fmt::format("segment of type {} ({} bytes) reaches past the end of the file",
                                              s.p_type, s.p_filesz));
    if (s.p_type == PT_INTERP) {
      TRACEBED_ASSIGN_OR_RETURN(out.interpreter, c_string(b, s.p_offset, s.p_offset + s.p_filesz, "PT_INTERP"));
    } else {
      dynamic = &s;
    }
  }
  if (!dynamic) return out;  // static
  TRACEBED_ASSIGN_OR_RETURN(DynamicEntries d, dynamic_entries(elf.get(), *dynamic));
  if (d.needed.empty()) return out;
  if (!d.strtab || !d.strsz) return error_at(dynamic->p_offset, "DT_NEEDED without DT_STRTAB and DT_STRSZ");
  // DT_STRTAB is an address: the PT_LOAD segment holding it gives its offset.
  std::optional<uint64_t> str_offset;
  for (const auto& s : segments) {
    if (s.p_type == PT_LOAD && *d.strtab >= s.p_vaddr && *d.strtab - s.p_vaddr < s.p_filesz) {
      str_offset = s.p_offset + (*d.strtab - s.p_vaddr);
      break;
    }
  }
  if (!str_offset)
    return error_at(dynamic->p_offset, fmt::format("DT_STRTAB {:#x} is in no PT_LOAD segment", *d.strtab));
  if (!inside(*str_offset, *d.strsz, b.size()))
    return error_at(*str_offset, fmt::format("the dynamic string table ({} bytes) reaches past the end of the file",
                                             *d.strsz));
  for (const auto& [name, at] : d.needed) {
    if (name >= *d.strsz)
      return error_at(at, fmt::format("DT_NEEDED name {} is outside DT_STRSZ {}", name, *d.strsz));
    TRACEBED_ASSIGN_OR_RETURN(std::string s,
                              c_string(b, *str_offset + name, *str_offset + *d.strsz, "DT_NEEDED name"));
    out.needed.push_back(std::move(s));
  }
  return out;
}

Result<ElfDynamic> read_elf_dynamic(const fs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(std::string bytes, base::read_file(file));
  auto r = read_elf_dynamic(std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
  if (!r) return r.error().within(file.string());
  return r;
}

bool is_elf_file(const fs::path& file) {
  if (elf_version(EV_CURRENT) == EV_NONE) return false;
  int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  ElfHandle elf(elf_begin(fd, ELF_C_READ_MMAP, nullptr), elf_end);
  bool is_elf = elf && elf_kind(elf.get()) == ELF_K_ELF;
  elf.reset();
  ::close(fd);
  return is_elf;
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
