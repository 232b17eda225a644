// `tracebed kernels list | fetch NAME | build NAME|--tree DIR | info NAME | check K`: the kernel catalogue,
// and building your own tree.
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/cli/tree_options.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/kernel_build.h"
#include "framework/vm/cache/cache.h"
#include "framework/vm/guests/snapshot.h"

namespace tracebed::cli {
namespace {

// Options worth knowing before writing a tracing test (kernel/trace/Kconfig,
// plus what probes, BTF arguments and RT depend on).
bool tracing_option(std::string_view name) {
  static const std::regex re(
      "CONFIG_(TRACING|FTRACE|GENERIC_TRACER|RING_BUFFER|FUNCTION_TRACER|FUNCTION_GRAPH_TRACER|FUNCTION_GRAPH_RETVAL|"
      "FUNCTION_PROFILER|DYNAMIC_FTRACE|DYNAMIC_FTRACE_WITH_REGS|DYNAMIC_FTRACE_WITH_ARGS|"
      "DYNAMIC_FTRACE_WITH_DIRECT_CALLS|FTRACE_SYSCALLS|STACK_TRACER|TRACER_SNAPSHOT|TRACER_SNAPSHOT_PER_CPU_SWAP|"
      "IRQSOFF_TRACER|PREEMPT_TRACER|SCHED_TRACER|HWLAT_TRACER|OSNOISE_TRACER|TIMERLAT_TRACER|MMIOTRACE|"
      "BLK_DEV_IO_TRACE|KPROBES|UPROBES|KPROBE_EVENTS|UPROBE_EVENTS|FPROBE|FPROBE_EVENTS|BPF_EVENTS|DYNAMIC_EVENTS|"
      "PROBE_EVENTS|PROBE_EVENTS_BTF_ARGS|SYNTH_EVENTS|USER_EVENTS|HIST_TRIGGERS|TRACE_EVENT_INJECT|"
      "TRACE_EVAL_MAP_FILE|BOOTTIME_TRACING|BOOT_CONFIG|KALLSYMS_ALL|DEBUG_INFO_BTF|PREEMPT_RT|MAGIC_SYSRQ)");
  return std::regex_match(std::string(name), re);
}

void print_catalogue() {
  auto c = load_catalogue();
  fmt::print("{:<16} {:<18} {:<30} {:<7} {}\n", "NAME", "SUITE", "RELEASE", "CACHED", "PACKAGE");
  for (const auto& [name, k] : c.kernels()) {
    std::string pkg = k.build            ? fmt::format("build from {}={}", k.build->source.name, k.build->source.version)
                      : k.packages.empty() ? k.local_image.string()
                                           : fmt::format("{}={}", k.packages[0].name, k.packages[0].version);
    fmt::print("{:<16} {:<18} {:<30} {:<7} {}{}\n", name, k.suite, k.release, vm::kernel_cached(k) ? "yes" : "no",
               pkg, name == c.default_kernel() ? "  (default)" : "");
  }
}

void fetch_kernels(std::vector<std::string> names) {
  auto c = load_catalogue();
  if (names.size() == 1 && names[0] == "all") {
    names.clear();
    for (const auto& [n, k] : c.kernels()) {
      // Downloads only: a build takes minutes and has its own command.
      if (k.build && !vm::kernel_cached(k)) {
        vm::progress(fmt::format("{}: not built, skipped (tracebed kernels build {})", n, n));
        continue;
      }
      names.push_back(n);
    }
  }
  for (const auto& name : names) {
    auto files = vm::fetch_kernel(c, resolve_kernel(c, name));
    if (!files) cannot_run(files.error().message);
    fmt::print("{} {} {}\n", name, files->release, files->vmlinuz.string());
  }
}

struct BuildArgs {
  std::string name;
  TreeArgs tree;
  GcovArgs gcov;
};

void add_build_command(CLI::App& cmd) {
  auto args = std::make_shared<BuildArgs>();
  auto* build = cmd.add_subcommand(
      "build", "build a kernel of kind \"build\" from Debian's linux-source, or your own tree (--tree), and cache it");
  build->add_option("name", args->name, "catalogue name (e.g. tracebed-7.2)");
  build->add_option("--tree", args->tree.tree,
                    "your kernel source tree (git or unpacked tarball), built out of tree under the cache; again "
                    "after a change, make remakes what changed");
  add_tree_config_options(*build, args->tree, "");
  add_gcov_options(*build, args->gcov);
  build->add_option("--jobs", args->tree.jobs, "parallel make jobs (default: one per CPU)");
  build->final_callback([args] {
    auto& a = *args;
    if (a.name.empty() == a.tree.tree.empty()) usage_error("kernels build: give a catalogue name or --tree DIR");
    a.tree.gcov_paths = gcov_paths(a.gcov);
    if (!a.tree.tree.empty()) {
      auto built = build_tree_or_exit(a.tree);
      fmt::print("{} {} {}\n", built.kernel_dir.parent_path().filename().string(), built.release,
                 built.kernel_dir.string());
      return;
    }
    if (a.tree.base != "tinyconfig" || !a.tree.config.empty())
      usage_error("--base and --config are for --tree; a catalogue kernel's recipe names its base config");
    auto c = load_catalogue();
    auto spec = resolve_kernel(c, a.name);
    if (!a.tree.gcov_paths.empty()) {
      auto profiled = vm::with_gcov(spec, a.tree.gcov_paths);
      if (!profiled) usage_error(profiled.error().message);
      spec = std::move(profiled).value();
    }
    unsigned jobs = a.tree.jobs > 0 ? a.tree.jobs : tree_build_options_jobs();
    auto files = vm::build_kernel(c, spec, {.fragment = a.tree.fragment, .jobs = jobs});
    if (!files) cannot_run(files.error().message);
    // A gcov build is booted by its directory (`--kernel DIR`).
    std::string where = a.tree.gcov_paths.empty() ? files->vmlinuz.string() : files->vmlinuz.parent_path().string();
    fmt::print("{} {} {}\n", a.name, files->release, where);
  });
}

// The config's lines for the options tracing_option() names.
void print_tracing_options(const std::string& config) {
  std::stringstream ss(config);
  for (std::string line; std::getline(ss, line);) {
    std::string name;
    if (line.starts_with("CONFIG_")) name = line.substr(0, line.find('='));
    else if (line.starts_with("# CONFIG_") && line.ends_with(" is not set")) name = line.substr(2, line.find(' ', 2) - 2);
    if (!name.empty() && tracing_option(name)) fmt::print("  {}\n", line);
  }
}

void print_kernel_info(const std::string& name) {
  auto c = load_catalogue();
  auto spec = resolve_kernel(c, name);
  auto files = vm::fetch_kernel(c, spec);
  if (!files) cannot_run(files.error().message);
  fmt::print("name:     {}\nrelease:  {}\nimage:    {}\n", files->name, files->release, files->vmlinuz.string());
  for (const auto& p : spec.packages) fmt::print("package:  {} {}\n", p.name, p.version);
  if (!files->modules_dir.empty()) fmt::print("modules:  {}\n", files->modules_dir.string());
  // One snapshot per guest image and command line (framework/vm/guests/snapshot.h).
  auto snapshots = vm::snapshots_of(files->name);
  if (snapshots.empty()) fmt::print("snapshot: none (the next guest boots cold and saves one)\n");
  for (const auto& s : snapshots)
    fmt::print("snapshot: {:.0f} MiB, saved {} by {} (replaces a {:.1f} s boot)\n", s.bytes / 1048576.0, s.created,
               s.qemu_version, s.boot_seconds);
  auto config = base::read_file(files->config);
  if (!config) {
    fmt::print("config:   (none found)\n");
    return;
  }
  fmt::print("config:   {}\ntracing options:\n", files->config.string());
  print_tracing_options(*config);
}

}  // namespace

void add_kernels_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("kernels", "the kernel catalogue: list, fetch, build, info, check");
  cmd->require_subcommand(1);
  add_kernels_check_command(*cmd);
  cmd->add_subcommand("list", "list catalogue kernels and whether they are cached")->final_callback(print_catalogue);
  auto fetch_names = std::make_shared<std::vector<std::string>>();
  auto* fetch = cmd->add_subcommand("fetch", "download, verify and unpack kernels (\"all\" for every one)");
  fetch->add_option("names", *fetch_names, "catalogue names, or all")->required();
  fetch->final_callback([fetch_names] { fetch_kernels(*fetch_names); });
  add_build_command(*cmd);
  auto info_name = std::make_shared<std::string>();
  auto* info = cmd->add_subcommand("info", "release, files and tracing options of a kernel");
  info->add_option("name", *info_name, "catalogue name or bzImage path")->required();
  info->final_callback([info_name] { print_kernel_info(*info_name); });
}

}  // namespace tracebed::cli
