#include "framework/vm/kernels/kernel_check.h"

#include <algorithm>

#include <fmt/format.h>

#include "framework/base/text.h"
#include "framework/vm/kernels/guest_config_fragment.h"

namespace tracebed::vm {
namespace fs = std::filesystem;
namespace {

// In the guest's section but not required, as Debian's kernels show: their
// /init mounts devtmpfs itself (image.cc), /proc/sys only two tests read
// (the stack tracer's and perf's; 7.3-rc has no PROC_SYSCTL), and without
// ACPI the guest halts instead of powering off, which Guest::stop()
// recognises.
bool recommended_only(std::string_view option) {
  return option == "CONFIG_ACPI" || option == "CONFIG_DEVTMPFS_MOUNT" || option == "CONFIG_PROC_SYSCTL";
}

// The guest's section of the fragment: from "# What the guest needs" to the
// first blank line. VIRTIO_PCI and VIRTIO_CONSOLE may be modules: the image
// loads them (KernelSpec::modules).
void add_guest_needs(std::vector<ConfigNeed>& out) {
  size_t start = kTracebedConfigFragment.find("# What the guest needs");
  if (start == std::string_view::npos) return;
  size_t end = kTracebedConfigFragment.find("\n\n", start);
  for (std::string_view line : base::split(kTracebedConfigFragment.substr(start, end - start), '\n')) {
    if (!line.starts_with("CONFIG_")) continue;
    std::string option(line.substr(0, line.find('=')));
    bool module_ok = option == "CONFIG_VIRTIO_PCI" || option == "CONFIG_VIRTIO_CONSOLE";
    out.push_back({option, module_ok ? "y,m" : "y", "guest", !recommended_only(option)});
  }
}

// What each suite's tests exercise (kernel/trace/Kconfig names them); the
// suites probe tracefs and skip what is not there, so these are optional.
struct SuiteOptions {
  const char* suite;
  std::vector<const char*> options;
};
const SuiteOptions kSuites[] = {
    {"events", {"CONFIG_FTRACE_SYSCALLS"}},
    {"function", {"CONFIG_FUNCTION_TRACER", "CONFIG_DYNAMIC_FTRACE", "CONFIG_STACK_TRACER"}},
    {"function_graph", {"CONFIG_FUNCTION_GRAPH_TRACER", "CONFIG_FUNCTION_GRAPH_RETVAL"}},
    {"kprobe", {"CONFIG_KPROBES", "CONFIG_KPROBE_EVENTS"}},
    {"uprobe", {"CONFIG_UPROBES", "CONFIG_UPROBE_EVENTS"}},
    // Eprobes (kernel/trace/trace_eprobe.c) are built with PROBE_EVENTS.
    {"eprobe", {"CONFIG_PROBE_EVENTS"}},
    {"fprobe", {"CONFIG_FPROBE", "CONFIG_FPROBE_EVENTS"}},
    {"hist", {"CONFIG_HIST_TRIGGERS"}},
    {"synthetic", {"CONFIG_SYNTH_EVENTS", "CONFIG_HIST_TRIGGERS"}},
    {"sqlhist", {"CONFIG_SYNTH_EVENTS", "CONFIG_HIST_TRIGGERS"}},
    {"trigger", {"CONFIG_TRACER_SNAPSHOT"}},
    {"user_events", {"CONFIG_USER_EVENTS"}},
    {"latency",
     {"CONFIG_IRQSOFF_TRACER", "CONFIG_PREEMPT_TRACER", "CONFIG_SCHED_TRACER", "CONFIG_HWLAT_TRACER",
      "CONFIG_OSNOISE_TRACER", "CONFIG_TIMERLAT_TRACER"}},
    {"boottime", {"CONFIG_BOOT_CONFIG", "CONFIG_BOOTTIME_TRACING"}},
    {"tooling", {"CONFIG_PERF_EVENTS", "CONFIG_OSNOISE_TRACER", "CONFIG_TIMERLAT_TRACER"}},
};

}  // namespace

const std::vector<ConfigNeed>& config_needs() {
  static const std::vector<ConfigNeed> needs = [] {
    std::vector<ConfigNeed> out;
    add_guest_needs(out);
    // tracefs with trace events: what every suite uses.
    for (const char* o : {"CONFIG_FTRACE", "CONFIG_TRACING", "CONFIG_EVENT_TRACING"})
      out.push_back({o, "y", "tracing", true});
    for (const auto& s : kSuites)
      for (const char* o : s.options) out.push_back({o, "y", s.suite, false});
    return out;
  }();
  return needs;
}

bool ConfigCheck::ok(bool all) const {
  return std::none_of(missing.begin(), missing.end(), [all](const ConfigMissing& m) { return all || m.need.required; });
}

ConfigCheck check_kernel_config(const KconfigValues& config) {
  ConfigCheck check;
  for (const auto& need : config_needs()) {
    auto it = config.find(need.option);
    std::string value = it == config.end() ? "n" : it->second;
    bool accepted = false;
    for (std::string_view a : base::split(need.accepted, ',')) accepted |= a == value;
    if (!accepted) check.missing.push_back({need, value});
  }
  return check;
}

Result<fs::path> find_kernel_config(const fs::path& dir_or_image) {
  std::error_code ec;
  if (fs::is_directory(dir_or_image, ec)) {
    if (fs::is_regular_file(dir_or_image / ".config", ec)) return dir_or_image / ".config";
    return Error{fmt::format("{}: no .config (not a configured kernel build tree)", dir_or_image.string())};
  }
  if (!fs::is_regular_file(dir_or_image, ec)) return Error{fmt::format("{}: no such file", dir_or_image.string())};
  const fs::path image = fs::absolute(dir_or_image);
  std::vector<fs::path> candidates;
  // arch/x86/boot/bzImage in a build tree: the tree's .config.
  for (fs::path dir = image.parent_path(); dir != dir.root_path(); dir = dir.parent_path())
    if (fs::exists(dir / "Makefile", ec) && fs::exists(dir / ".config", ec)) {
      candidates.push_back(dir / ".config");
      break;
    }
  std::string name = image.filename().string();
  if (name.starts_with("vmlinuz-")) candidates.push_back(image.parent_path() / ("config-" + name.substr(8)));
  candidates.push_back(image.parent_path() / "config");
  for (const auto& c : candidates)
    if (fs::is_regular_file(c, ec)) return c;
  return Error{fmt::format("{}: no config found (looked for a build tree's .config above it, config-RELEASE beside "
                           "vmlinuz-RELEASE, and config beside it)",
                           image.string())};
}

}  // namespace tracebed::vm
