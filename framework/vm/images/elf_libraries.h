// The shared libraries an ELF program needs, found in a tree of unpacked
// packages instead of the host's /lib: what a tool from another Debian
// release must carry into a guest.
//
// read_elf_dynamic() reads a 64-bit little-endian ELF file's interpreter
// (PT_INTERP) and DT_NEEDED names through its program headers, as the
// dynamic loader does (elf(5); glibc elf/dl-load.c), with libelf. library_closure()
// follows DT_NEEDED from a program through a lookup, breadth first, and
// reports what it could not find with what needed it.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

struct ElfDynamic {
  std::string interpreter;          // PT_INTERP, empty for a static program or a library
  std::vector<std::string> needed;  // DT_NEEDED, in order
};

// Errors name what is wrong and the offset ("offset 0x40: program header 3
// reaches past the end of the file").
Result<ElfDynamic> read_elf_dynamic(std::span<const uint8_t> bytes);
// The same for a file; errors are prefixed with its path.
Result<ElfDynamic> read_elf_dynamic(const std::filesystem::path& file);

// True when the file starts with the ELF magic.
bool is_elf_file(const std::filesystem::path& file);

struct LibraryClosure {
  // soname -> the file found for it, for every library reached.
  std::map<std::string, std::filesystem::path> libraries;
  // The interpreter's file name (ld-linux-x86-64.so.2) when the program has one.
  std::string interpreter;
  // soname -> the file that needed it, for each soname the lookup did not find.
  std::map<std::string, std::filesystem::path> missing;
};

// Follows DT_NEEDED from `program`; the program's interpreter is looked up
// by its file name like any library. `find` maps a soname to a file.
Result<LibraryClosure> library_closure(
    const std::filesystem::path& program,
    const std::function<std::optional<std::filesystem::path>(const std::string& soname)>& find);

}  // namespace tracebed::vm
