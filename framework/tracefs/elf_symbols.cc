#include "framework/tracefs/elf_symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include <cerrno>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "framework/tracefs/file_ops.h"

namespace tracebed::tracefs {

namespace {

// The descriptor and the Elf handle, released together.
class ElfFile {
 public:
  ElfFile() = default;
  ElfFile(const ElfFile&) = delete;
  ElfFile& operator=(const ElfFile&) = delete;
  ~ElfFile() {
    if (elf_) elf_end(elf_);
    if (fd_ >= 0) close(fd_);
  }

  Status open(const std::string& path) {
    if (elf_version(EV_CURRENT) == EV_NONE) return Error{fmt::format("{}: libelf: {}", path, elf_errmsg(-1))};
    fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd_ < 0) return Error{fmt::format("open {}: {}", path, errno_text(errno))};
    elf_ = elf_begin(fd_, ELF_C_READ, nullptr);
    if (!elf_) return Error{fmt::format("{}: libelf: {}", path, elf_errmsg(-1))};
    if (elf_kind(elf_) != ELF_K_ELF) return Error{fmt::format("{}: not an ELF file", path)};
    return {};
  }
  Elf* get() const { return elf_; }

 private:
  int fd_ = -1;
  Elf* elf_ = nullptr;
};

struct Candidate {
  GElf_Sym sym;
  bool dynamic;
};

bool is_function(const GElf_Sym& s) {
  int type = GELF_ST_TYPE(s.st_info);
  return (type == STT_FUNC || type == STT_GNU_IFUNC) && s.st_shndx != SHN_UNDEF;
}

// Every defined function called `name` in the sections of this type.
std::vector<Candidate> functions_named(Elf* elf, Elf64_Word section_type, std::string_view name) {
  std::vector<Candidate> out;
  Elf_Scn* scn = nullptr;
  while ((scn = elf_nextscn(elf, scn)) != nullptr) {
    GElf_Shdr shdr;
    if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != section_type || shdr.sh_entsize == 0) continue;
    Elf_Data* data = elf_getdata(scn, nullptr);
    if (!data) continue;
    size_t count = shdr.sh_size / shdr.sh_entsize;
    for (size_t i = 0; i < count; ++i) {
      GElf_Sym sym;
      if (!gelf_getsym(data, static_cast<int>(i), &sym) || !is_function(sym)) continue;
      const char* n = elf_strptr(elf, shdr.sh_link, sym.st_name);
      if (n && name == n) out.push_back({sym, section_type == SHT_DYNSYM});
    }
  }
  return out;
}

}  // namespace

Result<ElfSymbol> find_elf_function(const std::string& path, std::string_view name) {
  ElfFile file;
  TRACEBED_TRY(file.open(path));
  Elf* elf = file.get();

  std::vector<Candidate> found = functions_named(elf, SHT_SYMTAB, name);
  if (found.empty()) found = functions_named(elf, SHT_DYNSYM, name);
  if (found.empty()) return Error{fmt::format("{}: no function symbol \"{}\" (.symtab, .dynsym)", path, name)};

  std::optional<Candidate> pick;
  for (const Candidate& c : found) {
    if (GELF_ST_BIND(c.sym.st_info) != STB_LOCAL) {
      pick = c;
      break;
    }
  }
  if (!pick) {
    for (const Candidate& c : found) {
      if (c.sym.st_value != found.front().sym.st_value)
        return Error{fmt::format("{}: function \"{}\" is ambiguous: {} local definitions at different addresses",
                                 path, name, found.size())};
    }
    pick = found.front();
  }

  size_t phnum = 0;
  if (elf_getphdrnum(elf, &phnum) != 0 || phnum == 0)
    return Error{fmt::format("{}: no program headers (not an executable or shared object)", path)};
  uint64_t addr = pick->sym.st_value;
  for (size_t i = 0; i < phnum; ++i) {
    GElf_Phdr ph;
    if (!gelf_getphdr(elf, static_cast<int>(i), &ph) || ph.p_type != PT_LOAD) continue;
    if (addr < ph.p_vaddr || addr >= ph.p_vaddr + ph.p_filesz) continue;
    ElfSymbol s;
    s.name = std::string(name);
    s.value = addr;
    s.size = pick->sym.st_size;
    s.file_offset = addr - ph.p_vaddr + ph.p_offset;
    s.dynamic = pick->dynamic;
    s.local = GELF_ST_BIND(pick->sym.st_info) == STB_LOCAL;
    return s;
  }
  return Error{fmt::format("{}: function \"{}\" at {:#x} lies in no PT_LOAD segment", path, name, addr)};
}

}  // namespace tracebed::tracefs
