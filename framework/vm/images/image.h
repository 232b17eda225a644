// Guest images: an initramfs per kernel (cpio newc, gzip) holding busybox,
// the static agent, the probe target program, the modules the agent channel needs, an /init script and
// optional payloads. Images are cached under their content hash, so a second
// boot with the same inputs reuses the file.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"

namespace tracebed::vm {

struct Payload {
  std::filesystem::path host;  // file on the host
  std::string guest;           // absolute path in the guest
  uint32_t mode = 0;           // 0: the host file's mode
};

struct ImageOptions {
  std::vector<Payload> files;
  // Host executables copied with every shared library `ldd` names: the
  // binary goes to /opt/tracebed/bin, libraries to /opt/tracebed/lib (the
  // agent puts both on PATH / LD_LIBRARY_PATH), the ELF interpreter to its
  // own absolute path.
  std::vector<std::filesystem::path> tools;
  std::filesystem::path agent;    // default: $TRACEBED_AGENT or the build's tracebed-agent
  std::filesystem::path probe_target;  // default: probe_target_path()
  std::filesystem::path busybox;  // default: busybox on PATH (must be static)
};

// Where the probe target program sits in every guest.
inline constexpr std::string_view kGuestProbeTarget = "/opt/tracebed/bin/tracebed-probe-target";
// The same binary on the host ($TRACEBED_PROBE_TARGET or the build's), for
// resolving its symbols to uprobe offsets.
std::filesystem::path probe_target_path();

// Writes (or finds) the image; returns its path in the cache.
Result<std::filesystem::path> build_initramfs(const KernelFiles& kernel, const ImageOptions& options);

// The modules to load for `wanted`, dependencies first, from modules.dep;
// modules listed in modules.builtin are skipped. Paths are relative to
// modules_dir. Exposed for tests.
Result<std::vector<std::string>> module_load_order(const std::filesystem::path& modules_dir,
                                                   const std::vector<std::string>& wanted);

// cpio "newc" archive writer (the format the kernel unpacks,
// Documentation/driver-api/early-userspace/buffer-format.rst).
class CpioWriter {
 public:
  void dir(std::string_view path, uint32_t mode = 0755);
  void file(std::string_view path, std::string_view data, uint32_t mode);
  void symlink(std::string_view path, std::string_view target);
  void char_device(std::string_view path, uint32_t major, uint32_t minor, uint32_t mode = 0600);
  // Appends the trailer and returns the archive.
  std::string finish();

 private:
  void entry(std::string_view path, uint32_t mode, std::string_view data, uint32_t rmajor = 0, uint32_t rminor = 0);
  std::string out_;
  uint32_t ino_ = 1;
};

}  // namespace tracebed::vm
