#include "framework/vm/kernels/tree_build.h"

#include <unistd.h>

#include <fmt/ranges.h>

#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/vm/kernels/gcov_build.h"
#include "framework/vm/kernels/kernel_build_steps.h"
#include "framework/vm/kernels/module_build.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

namespace {

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

bool is_kernel_tree(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "Makefile", ec) && fs::is_regular_file(dir / "Kconfig", ec) &&
         fs::is_directory(dir / "kernel", ec);
}

bool is_built_tree_kernel(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "bzImage", ec) && fs::is_regular_file(dir / ".complete", ec);
}

Result<TreeBuildPaths> tree_build_paths(const TreeBuildOptions& options) {
  std::error_code ec;
  fs::path real = fs::canonical(options.tree, ec);
  if (ec) return Error{fmt::format("kernel tree {}: {}", options.tree.string(), ec.message())};
  if (!is_kernel_tree(real))
    return Error{fmt::format("{} is not a kernel source tree (no Makefile, Kconfig and kernel/ at its top)",
                             options.tree.string())};
  // kbuild refuses an O= build of a tree configured in place.
  for (const char* mark : {".config", "include/config"})
    if (fs::exists(real / mark))
      return Error{
          fmt::format("{} has been configured in place ({} exists); tracebed builds out of tree and kbuild "
                      "needs the tree clean for that: `make -C {} mrproper` (keep your .config elsewhere "
                      "and start from it with --base olddefconfig --config FILE)",
                      options.tree.string(), mark, options.tree.string())};
  const std::string& base = options.base_config;
  if (base != "tinyconfig" && base != "defconfig" && base != "olddefconfig")
    return Error{fmt::format("base config {}: not tinyconfig, defconfig or olddefconfig", base)};
  if (base == "olddefconfig" && options.start_config.empty())
    return Error{"--base olddefconfig starts from your own .config: name it with --config FILE"};
  if (base != "olddefconfig" && !options.start_config.empty())
    return Error{fmt::format("--config is what --base olddefconfig starts from; with --base {} it is not used", base)};
  TRACEBED_ASSIGN_OR_RETURN(std::string fragment, base::read_file(options.fragment));
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues wanted, parse_kconfig_values(fragment, options.fragment.string()));
  if (wanted.empty()) return Error{fmt::format("{}: the fragment sets no option", options.fragment.string())};

  TreeBuildPaths p;
  p.key = fmt::format("tree {}\nbase_config {}\nfragment\n{}", real.string(), base, fragment);
  const bool gcov = !options.gcov_paths.empty();
  if (gcov) p.key += fmt::format("gcov {}\n", fmt::join(options.gcov_paths, ","));
  if (!options.start_config.empty()) {
    TRACEBED_ASSIGN_OR_RETURN(std::string start, base::read_file(options.start_config));
    p.key += "start_config\n" + start;
  }
  p.root = cache_dir() / "trees" /
           fmt::format("{}{}-{}", real.filename().string(), gcov ? "-gcov" : "", content_hash(p.key).substr(0, 12));
  p.build = p.root / "build";
  p.kernel_dir = p.root / "kernel";
  return p;
}

Result<TreeBuild> build_tree_kernel(const TreeBuildOptions& options) {
  const auto t0 = Clock::now();
  TRACEBED_ASSIGN_OR_RETURN(TreeBuildPaths paths, tree_build_paths(options));
  TRACEBED_ASSIGN_OR_RETURN(std::string fragment_text, base::read_file(options.fragment));
  const bool gcov = !options.gcov_paths.empty();
  if (gcov) fragment_text += fmt::format("\n# --gcov\n{}", kGcovFragment);
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues wanted, parse_kconfig_values(fragment_text, options.fragment.string()));
  TRACEBED_TRY(require_build_tools(wanted, /*unpack=*/false));
  fs::path real = fs::canonical(options.tree);
  std::string name = paths.root.filename().string();

  // One build per tree and config at a time; a second caller waits.
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock, base::LockFile::acquire(paths.root / ".lock"));
  std::error_code ec;
  fs::path log_path = paths.root / "build.log";
  fs::remove(log_path, ec);  // the last build's, not every one's
  KernelMake km(name, log_path, fmt::format("build directory {}", paths.build.string()));
  km.set_tree(real, paths.build);
  Stages& stages = km.stages();
  TreeBuild out;
  out.kernel_dir = paths.kernel_dir;

  // The key names the config inputs, so one configure per directory; the
  // stamp is written once the check passed.
  fs::path stamp = paths.root / ".configured";
  auto stamped = base::read_file(stamp);
  if (!stamped || *stamped != paths.key || !fs::exists(paths.build / ".config")) {
    const auto tc = Clock::now();
    stages.start("configure", fmt::format("{} in {}: make {} + {} + olddefconfig", real.string(), paths.build.string(),
                                          options.base_config, options.fragment.filename().string()));
    fs::remove(stamp, ec);
    TRACEBED_TRY(km.configure(options.base_config, options.start_config, options.fragment, fragment_text));
    out.configure_seconds = seconds_since(tc);
  }
  stages.start("check", fmt::format("every option of {} in .config", options.fragment.filename().string()));
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues config, km.check(wanted, options.fragment));
  TRACEBED_TRY(write_file_atomic(stamp, paths.key));

  const auto tm = Clock::now();
  bool modules = config.count("CONFIG_MODULES") && config.at("CONFIG_MODULES") == "y";
  if (gcov) {
    TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> vars, gcov_make_variables(real, options.gcov_paths));
    km.set_make_variables(std::move(vars));
  }
  TRACEBED_TRY(km.build(options.jobs, modules));
  out.make_seconds = seconds_since(tm);

  stages.start("copy", paths.kernel_dir.string());
  fs::path staged = paths.root / fmt::format("kernel.partial{}", getpid());
  TRACEBED_ASSIGN_OR_RETURN(out.release, km.stage(staged, modules));
  if (gcov) TRACEBED_TRY(stage_gcov_files(real, paths.build, options.gcov_paths, staged / "gcov"));
  TRACEBED_TRY(write_file_atomic(staged / ".complete", out.release + "\n"));
  fs::remove_all(paths.kernel_dir, ec);
  fs::rename(staged, paths.kernel_dir, ec);
  if (ec) return Error{fmt::format("{}: {}", paths.kernel_dir.string(), ec.message())};
  if (modules) {
    stages.start("modules", "tracebed's own modules");
    KernelFiles files;
    files.name = name;
    files.release = out.release;
    files.vmlinuz = paths.kernel_dir / "bzImage";
    files.config = paths.kernel_dir / "config";
    files.modules_dir = paths.kernel_dir / "lib" / "modules" / out.release;
    if (auto kos = build_own_modules(files, options.jobs); !kos)
      return Error{fmt::format("{}: the kernel is built, but not tracebed's modules: {}", name, kos.error().message)};
  }
  std::string summary = stages.summary();
  out.total_seconds = seconds_since(t0);
  progress(fmt::format("{}: built {} in {} ({}); {}", name, out.release, minutes(stages.total()), summary,
                       paths.kernel_dir.string()));
  return out;
}

}  // namespace tracebed::vm
