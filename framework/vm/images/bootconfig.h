// Boot configuration (Documentation/admin-guide/bootconfig.rst) appended to
// an initrd, the way the kernel finds it (init/main.c
// get_boot_config_from_initrd) and tools/bootconfig writes it:
//
//   [initrd][bootconfig text][\0][padding \0s][size le32][checksum le32][#BOOTCONFIG\n]
//
// size counts the text, its terminating NUL and the padding; the padding
// makes the whole file a multiple of 4 bytes; the checksum is the sum of the
// data bytes (include/linux/bootconfig.h xbc_calc_checksum). The kernel
// reads it only when the command line has `bootconfig` (kBootconfigArgument).
//
//   auto image = append_bootconfig(initrd, "ftrace.tracer = \"function\"\n");
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::vm {

inline constexpr std::string_view kBootconfigMagic = "#BOOTCONFIG\n";
inline constexpr std::string_view kBootconfigArgument = "bootconfig";
// XBC_DATA_MAX (include/linux/bootconfig.h): the largest size the kernel takes.
inline constexpr uint32_t kBootconfigMaxSize = (1u << 15) - 1;

// The bytes to append to an initrd of `initrd_size` bytes. An Error when the
// text holds a NUL (the kernel would stop there) or is too large.
Result<std::string> bootconfig_trailer(std::string_view text, uint64_t initrd_size);

// initrd + bootconfig_trailer(text, initrd.size()).
Result<std::string> append_bootconfig(std::string initrd, std::string_view text);

struct FoundBootconfig {
  std::string text;       // without the NUL and padding
  uint64_t initrd_size;   // where the initrd ends and the bootconfig starts
  uint32_t size;          // the size field
  uint32_t checksum;      // the checksum field (verified)
};

// Finds a bootconfig at the end of an image as the kernel does (magic in the
// last 12 bytes, or up to 3 bytes earlier for a loader that padded the file).
// No magic is an Error saying so; so are a size beyond the image or the
// kernel's limit and a checksum that does not match.
Result<FoundBootconfig> find_bootconfig(std::string_view image);

// False when `config` (a kernel .config) says the kernel was built without
// CONFIG_BOOT_CONFIG; true when it has it or the config cannot be read.
bool kernel_takes_bootconfig(const std::filesystem::path& config);

// A copy of an initramfs with the bootconfig appended, cached beside it
// under a name that hashes both; `text` is checked as bootconfig_trailer does.
Result<std::filesystem::path> initramfs_with_bootconfig(const std::filesystem::path& image, std::string_view text);

}  // namespace tracebed::vm
