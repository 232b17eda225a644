#include "framework/cli/tree_options.h"

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/gcov_build.h"

namespace tracebed::cli {

namespace {

// The fragment tracebed's own kernel is built with: what its guests and
// suites need.
constexpr const char* kDefaultFragmentKernel = "tracebed-7.2";

}  // namespace

void add_tree_config_options(CLI::App& cmd, TreeArgs& args, const std::string& prefix) {
  cmd.add_option("--" + prefix + "fragment", args.fragment,
                 fmt::format("config fragment merged over the base config (default: {}'s, the catalogue recipe's)",
                             kDefaultFragmentKernel));
  cmd.add_option("--" + prefix + "base", args.base, "config the fragment is merged over")
      ->check(CLI::IsMember({"tinyconfig", "defconfig", "olddefconfig"}))
      ->capture_default_str();
  cmd.add_option("--" + prefix + "config", args.config,
                 "with --" + prefix + "base olddefconfig: your .config to start from");
}

void add_gcov_options(CLI::App& cmd, GcovArgs& args) {
  cmd.add_flag("--gcov", args.gcov,
               "the kernel built with gcov profiling of kernel/trace (another cache entry); `test` and `matrix` "
               "collect each suite's counts and write an lcov report");
  cmd.add_option("--gcov-paths", args.paths,
                 "directories to profile with --gcov, relative to the tree's top (default: kernel/trace)");
}

std::vector<std::string> gcov_paths(const GcovArgs& args) {
  if (!args.gcov && args.paths.empty()) return {};
  if (args.paths.empty()) return vm::kDefaultGcovPaths;
  auto paths = vm::parse_gcov_paths(args.paths);
  if (!paths) usage_error(paths.error().message);
  return std::move(paths).value();
}

unsigned tree_build_options_jobs() { return static_cast<unsigned>(std::max(1, base::usable_cpus())); }

vm::TreeBuildOptions tree_build_options(const TreeArgs& args) {
  vm::TreeBuildOptions o;
  o.tree = args.tree;
  o.base_config = args.base;
  o.start_config = args.config;
  o.gcov_paths = args.gcov_paths;
  o.jobs = args.jobs > 0 ? args.jobs : tree_build_options_jobs();
  if (!args.fragment.empty()) {
    o.fragment = std::filesystem::absolute(args.fragment);
  } else {
    auto c = load_catalogue();
    auto it = c.kernels().find(kDefaultFragmentKernel);
    if (it == c.kernels().end() || !it->second.build)
      usage_error(fmt::format("no --fragment given and the catalogue has no {} recipe to take it from",
                              kDefaultFragmentKernel));
    o.fragment = it->second.build->fragment;
  }
  if (auto paths = vm::tree_build_paths(o); !paths) usage_error(paths.error().message);
  return o;
}

vm::TreeBuild build_tree_or_exit(const TreeArgs& args) {
  auto built = vm::build_tree_kernel(tree_build_options(args));
  if (!built) cannot_run(built.error().message);
  return std::move(built).value();
}

}  // namespace tracebed::cli
