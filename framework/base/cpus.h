// How many CPUs this process may run on (its affinity mask, which taskset
// and cgroup cpusets narrow): a helper thread only pays with a second one.
#pragma once

#include <sched.h>

namespace tracebed::base {

inline int usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return CPU_COUNT(&set);
}

}  // namespace tracebed::base
