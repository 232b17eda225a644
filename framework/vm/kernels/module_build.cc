#include "framework/vm/kernels/module_build.h"

#include <unistd.h>

#include "framework/base/install_layout.h"
#include "framework/base/text.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

Result<ProcessResult> run_logged(const std::vector<std::string>& argv, const fs::path& cwd, std::ofstream* log,
                                 std::chrono::seconds timeout) {
  if (log) {
    *log << "$";
    for (const auto& a : argv) *log << " " << a;
    *log << "\n";
  }
  auto r = run_process(argv, timeout, Output::capture, cwd);
  if (log && r) *log << r->output << std::flush;
  return r;
}

Status ran(const Result<ProcessResult>& r, std::string_view what) {
  if (!r) return r.error();
  if (r->status == 0) return {};
  std::string_view out = r->output;
  if (out.size() > 3000) out = out.substr(out.size() - 3000);
  return Error{fmt::format("{} failed (exit {}):\n{}", what, r->status, out)};
}

// lib/modules/REL -> the directory `depmod -b` takes (the one above lib/).
fs::path depmod_base(const fs::path& modules_dir) { return modules_dir.parent_path().parent_path().parent_path(); }

Status run_depmod(const fs::path& modules_dir, std::ofstream* log) {
  std::string release = modules_dir.filename().string();
  auto r = run_logged({"depmod", "-b", depmod_base(modules_dir).string(), release}, {}, log, 120s);
  return ran(r, fmt::format("depmod -b {} {} (Debian package kmod)", depmod_base(modules_dir).string(), release));
}

}  // namespace

Status install_built_modules(const fs::path& tree, const fs::path& staged, const std::string& release,
                             std::ofstream& log) {
  // Stripped: DWARF makes the sample modules megabytes each, and the guest
  // image carries every one.
  auto r = run_logged({"make", "INSTALL_MOD_PATH=" + staged.string(), "INSTALL_MOD_STRIP=1", "modules_install"}, tree,
                      &log, 1200s);
  TRACEBED_TRY(ran(r, "make modules_install"));
  fs::path modules_dir = staged / "lib" / "modules" / release;
  if (!fs::exists(modules_dir / "modules.dep"))
    return Error{fmt::format("make modules_install left no {} (is depmod, Debian package kmod, on PATH?)",
                             (modules_dir / "modules.dep").string())};
  // modules_install links build/ to the work tree, which goes; put the files
  // an external module needs in its place, as Debian's linux-headers does.
  std::error_code ec;
  fs::remove(modules_dir / "build", ec);
  fs::remove(modules_dir / "source", ec);
  r = run_logged({"make", "run-command",
                  "KBUILD_RUN_COMMAND=$(srctree)/scripts/package/install-extmod-build " + (modules_dir / "build").string()},
                 tree, &log, 1200s);
  TRACEBED_TRY(ran(r, "scripts/package/install-extmod-build"));
  if (!fs::exists(modules_dir / "build" / "Module.symvers"))
    return Error{fmt::format("{}: install-extmod-build left no Module.symvers", (modules_dir / "build").string())};
  return {};
}

Result<fs::path> module_build_tree(const KernelFiles& kernel) {
  if (kernel.modules_dir.empty())
    return Error{fmt::format("kernel {} has no modules directory: nothing to build a module against", kernel.name)};
  fs::path build = kernel.modules_dir / "build";
  if (!fs::exists(build / "Makefile") || !fs::exists(build / "Module.symvers"))
    return Error{fmt::format("kernel {} has no module build tree ({} with Makefile and Module.symvers); only kernels "
                             "built by `tracebed kernels build` have one",
                             kernel.name, build.string())};
  return build;
}

Result<std::vector<fs::path>> build_module(const KernelFiles& kernel, const fs::path& source, unsigned jobs) {
  TRACEBED_ASSIGN_OR_RETURN(fs::path tree, module_build_tree(kernel));
  if (!fs::exists(source / "Makefile") && !fs::exists(source / "Kbuild"))
    return Error{fmt::format("module source {}: no Makefile or Kbuild", source.string())};
  std::string name = fs::absolute(source).lexically_normal().filename().string();
  if (name.empty()) name = fs::absolute(source).lexically_normal().parent_path().filename().string();
  // kbuild writes its objects beside the sources: build a copy.
  fs::path work = depmod_base(kernel.modules_dir) / ".modules-work" / name;
  std::error_code ec;
  fs::remove_all(work, ec);
  fs::create_directories(work.parent_path(), ec);
  fs::copy(source, work, fs::copy_options::recursive, ec);
  if (ec) return Error{fmt::format("copying module source {} to {}: {}", source.string(), work.string(), ec.message())};
  std::ofstream log(work / "build.log");
  auto r = run_logged({"make", fmt::format("-j{}", std::max(1u, jobs)), "-C", tree.string(), "M=" + work.string(),
                       "modules"},
                      {}, &log, 1800s);
  TRACEBED_TRY(ran(r, fmt::format("building module {} against {} ({})", source.string(), kernel.name, tree.string())));
  std::vector<fs::path> installed;
  fs::path extra = kernel.modules_dir / "extra";
  fs::create_directories(extra, ec);
  for (auto it = fs::recursive_directory_iterator(work, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".ko") continue;
    fs::path to = extra / it->path().filename();
    fs::copy_file(it->path(), to, fs::copy_options::overwrite_existing, ec);
    if (ec) return Error{fmt::format("installing {} as {}: {}", it->path().string(), to.string(), ec.message())};
    installed.push_back(to);
  }
  if (installed.empty()) return Error{fmt::format("building module {}: make made no .ko", source.string())};
  TRACEBED_TRY(run_depmod(kernel.modules_dir, &log));
  return installed;
}

fs::path own_modules_dir() { return base::shared_data("modules", TRACEBED_SOURCE_DIR, "vmimages/modules"); }

Result<std::vector<fs::path>> build_own_modules(const KernelFiles& kernel, unsigned jobs) {
  std::vector<fs::path> all;
  std::error_code ec;
  for (auto it = fs::directory_iterator(own_modules_dir(), ec); !ec && it != fs::directory_iterator(); ++it) {
    if (!it->is_directory()) continue;
    progress(fmt::format("{}: building module {}", kernel.name, it->path().filename().string()));
    TRACEBED_ASSIGN_OR_RETURN(auto kos, build_module(kernel, it->path(), jobs));
    all.insert(all.end(), kos.begin(), kos.end());
  }
  return all;
}

}  // namespace tracebed::vm
