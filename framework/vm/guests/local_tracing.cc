#include "framework/vm/guests/local_tracing.h"

#include <unistd.h>

#include "framework/base/files.h"

namespace tracebed::vm {

std::string local_tracing_problem() {
  if (geteuid() != 0) return "testing this machine's kernel needs root (tracefs control files are root's)";
  auto mounts = base::read_file("/proc/mounts");
  if (!mounts || mounts->find(" /sys/kernel/tracing tracefs ") == std::string::npos)
    return "no tracefs at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing; the kernel needs "
           "CONFIG_FTRACE)";
  if (access("/sys/kernel/tracing/trace", W_OK) != 0)
    return "/sys/kernel/tracing/trace is not writable here";
  return "";
}

}  // namespace tracebed::vm
