#include "framework/vm/local_tracing.h"

#include <unistd.h>

#include <fstream>

namespace tracebed::vm {

std::string local_tracing_problem() {
  if (geteuid() != 0) return "testing this machine's kernel needs root (tracefs control files are root's)";
  std::ifstream mounts("/proc/mounts");
  bool mounted = false;
  for (std::string line; std::getline(mounts, line);)
    if (line.find(" /sys/kernel/tracing tracefs ") != std::string::npos) mounted = true;
  if (!mounted)
    return "no tracefs at /sys/kernel/tracing (mount -t tracefs nodev /sys/kernel/tracing; the kernel needs "
           "CONFIG_FTRACE)";
  if (access("/sys/kernel/tracing/trace", W_OK) != 0)
    return "/sys/kernel/tracing/trace is not writable here";
  return "";
}

}  // namespace tracebed::vm
