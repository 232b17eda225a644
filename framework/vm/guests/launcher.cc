#include "framework/vm/guests/launcher.h"

#include <fmt/format.h>

namespace tracebed::vm {

Result<std::unique_ptr<Launcher>> make_launcher(const std::string& name) {
  if (name == "qemu") return internal::make_qemu_launcher();
  if (name == "libvirt") return internal::make_libvirt_launcher();
  if (name == "local") return internal::make_local_launcher();
  return Error{fmt::format("unknown launcher '{}' (qemu, libvirt or local)", name)};
}

}  // namespace tracebed::vm
