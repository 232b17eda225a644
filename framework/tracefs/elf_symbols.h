// Function symbols of an ELF executable or shared object, and the file
// offset a uprobe wants for them.
//
// uprobe_events takes PATH:OFFSET where OFFSET is a position in the file,
// not an address (Documentation/trace/uprobetracer.rst: "the uprobe event
// interface expects the user to calculate the offset of the probepoint in
// the object"). A symbol's st_value is a virtual address in the object's
// own layout; the PT_LOAD segment that contains it maps file bytes
// [p_offset, p_offset + p_filesz) at [p_vaddr, ...), so
//   file offset = st_value - p_vaddr + p_offset
// (what perf probe and libbpf's elf_find_func_offset compute).
//
//   auto sym = find_elf_function("/usr/bin/tracebed-probe-target", "tracebed_target_add");
//   UprobeDef::at("add", guest_path, sym->file_offset);
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::tracefs {

struct ElfSymbol {
  std::string name;
  uint64_t value = 0;        // st_value: the address in the object's layout
  uint64_t size = 0;         // st_size
  uint64_t file_offset = 0;  // value - p_vaddr + p_offset of its PT_LOAD
  bool dynamic = false;      // found in .dynsym (no .symtab, or not in it)
  bool local = false;        // STB_LOCAL (a static function)
};

// The defined function (STT_FUNC or STT_GNU_IFUNC) called `name`, from
// .symtab, else .dynsym. A global or weak definition wins over a local
// one; two locals of that name at different addresses are ambiguous.
// Errors name the file: it cannot be opened, is not ELF, has no program
// headers (a relocatable .o), has no such function, or the function lies
// in no PT_LOAD segment.
Result<ElfSymbol> find_elf_function(const std::string& path, std::string_view name);

}  // namespace tracebed::tracefs
