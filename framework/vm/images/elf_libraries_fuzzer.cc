// libFuzzer target: an ELF file as a downloaded package could hold it,
// through read_elf_dynamic (program headers, PT_INTERP, the dynamic section
// and its string table, all bounds-checked).
#include <cstdint>
#include <span>

#include "framework/vm/images/elf_libraries.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto r = tracebed::vm::read_elf_dynamic(std::span<const uint8_t>(data, size));
  size_t sum = 0;
  if (r.ok()) {
    // Touch every name so ASan checks the bounds they came from.
    for (const auto& n : r->needed) sum += n.size();
    sum += r->interpreter.size();
  }
  return static_cast<int>(sum & 0);
}
