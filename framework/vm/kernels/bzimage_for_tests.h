// For tests: a stand-in bzImage, nothing bootable, whose setup header names
// a kernel release as a real one does (Documentation/arch/x86/boot.rst:
// "HdrS" at 0x202, and at 0x20e the kernel_version string's offset from
// 0x200).
#pragma once

#include <string>
#include <string_view>

namespace tracebed::vm {

inline std::string stand_in_bzimage(std::string_view version, size_t size = 0x1000) {
  std::string image(size, '\0');
  image.replace(0x202, 4, "HdrS");
  image[0x20e] = 0x00;  // kernel_version 0x100: the string at 0x300
  image[0x20f] = 0x01;
  image.replace(0x300, version.size(), version);
  return image;
}

}  // namespace tracebed::vm
