// What guest.cc and guest_libvirt.cc (the libvirt launcher's half of Guest)
// share; not for use outside framework/vm.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "framework/vm/guest.h"

namespace tracebed::vm::internal {

// /init prints this when the kernel has no virtio-serial port for the agent.
inline constexpr std::string_view kSerialFallback = "tracebed-init: no virtio-serial port";

// The kernel command line of a guest.
std::string kernel_cmdline(const GuestOptions& options);

// A new, empty directory for one guest's sockets, console and logs.
std::filesystem::path make_run_dir();

}  // namespace tracebed::vm::internal
