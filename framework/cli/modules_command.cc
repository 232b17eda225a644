// `tracebed modules build --kernel K [DIR...]`: out-of-tree modules built
// against a catalogue kernel's build tree and installed into its cache
// entry, where the next guest image of that kernel carries them.
#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/module_build.h"

namespace tracebed::cli {

void add_modules_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("modules", "out-of-tree kernel modules for a catalogue kernel's guests");
  cmd->require_subcommand(1);
  struct Args {
    std::string kernel;
    std::vector<std::string> dirs;
    unsigned jobs = 2;
  };
  auto args = std::make_shared<Args>();
  auto* build = cmd->add_subcommand(
      "build", "build kbuild module directories (default: tracebed's own, vmimages/modules/*) against a kernel");
  build->add_option("-k,--kernel", args->kernel, "catalogue name of a kernel built by `tracebed kernels build`")
      ->required();
  build->add_option("dirs", args->dirs, "module source directories (each with a kbuild Makefile)");
  build->add_option("--jobs", args->jobs, "parallel make jobs")->capture_default_str();
  build->final_callback([args] {
    vm::Catalogue c = load_catalogue();
    vm::KernelSpec spec = resolve_kernel(c, args->kernel, "--kernel");
    auto files = vm::fetch_kernel(c, spec);
    if (!files) cannot_run(files.error().message);
    std::vector<std::filesystem::path> installed;
    if (args->dirs.empty()) {
      auto kos = vm::build_own_modules(*files, args->jobs);
      if (!kos) cannot_run(kos.error().message);
      installed = *kos;
    }
    for (const auto& dir : args->dirs) {
      // A module that does not build is the user's input: exit 1, not 125.
      auto kos = vm::build_module(*files, dir, args->jobs);
      if (!kos) fail(kos.error().message);
      installed.insert(installed.end(), kos->begin(), kos->end());
    }
    for (const auto& ko : installed) fmt::print("{} {}\n", args->kernel, ko.string());
  });
}

}  // namespace tracebed::cli
