// libFuzzer target: the bootconfig at the end of an initramfs. Any image
// must end as the text found or an error (find_bootconfig reads sizes and
// a checksum from the image's last bytes); and any text we append must be
// found again, byte for byte, as the kernel would find it.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "framework/vm/images/bootconfig.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  (void)tracebed::vm::find_bootconfig(bytes);
  // The first byte splits the rest into an initrd and a bootconfig text.
  if (size < 1) return 0;
  size_t split = 1 + (size - 1) * data[0] / 256;
  std::string initrd(bytes.substr(1, split - 1));
  std::string_view text = bytes.substr(split);
  auto appended = tracebed::vm::append_bootconfig(initrd, text);
  if (!appended) return 0;  // a NUL in the text, or too long: refused
  auto found = tracebed::vm::find_bootconfig(*appended);
  if (!found || found->text != text || found->initrd_size != initrd.size()) std::abort();
  return 0;
}
