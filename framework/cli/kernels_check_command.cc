// `tracebed kernels check DIR|IMAGE|NAME [--all]`: what a kernel lacks to
// run the suites, from its config (framework/vm/kernels/kernel_check.h). Exits 0
// when nothing required is missing (with --all: nothing at all), 1 with the
// list otherwise, 2 when there is no such kernel or no config to read.
#include <filesystem>
#include <string>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/kernel_check.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

// A build tree or image path as given; else a catalogue kernel's config
// (fetched as `kernels info` does), or the one beside its image.
fs::path config_of(const std::string& what) {
  std::error_code ec;
  if (fs::exists(what, ec)) {
    auto found = vm::find_kernel_config(what);
    if (!found) usage_error(found.error().message);
    return *found;
  }
  const vm::Catalogue c = load_catalogue();
  auto files = vm::fetch_kernel(c, resolve_kernel(c, what));
  if (!files) cannot_run(files.error().message);
  if (fs::is_regular_file(files->config, ec)) return files->config;
  auto beside = vm::find_kernel_config(files->vmlinuz);
  if (!beside) usage_error(beside.error().message);
  return *beside;
}

void print_missing(const vm::ConfigCheck& check, bool required, std::string_view heading) {
  bool any = false;
  for (const auto& m : check.missing) {
    if (m.need.required != required) continue;
    if (!any) fmt::print("{}\n", heading);
    any = true;
    fmt::print("  {:<16} {} is {}, needs {}\n", m.need.who, m.need.option, m.value == "n" ? "not set" : m.value,
               m.need.accepted == "y" ? "y" : "y or m");
  }
}

}  // namespace

void add_kernels_check_command(CLI::App& kernels) {
  struct Args {
    std::string what;
    bool all = false;
  };
  auto args = std::make_shared<Args>();
  auto* check = kernels.add_subcommand("check", "what a kernel's config lacks to run the suites");
  check->add_option("kernel", args->what,
                    "kernel build tree (its .config), kernel image (config beside it or in its build tree), or "
                    "catalogue name")
      ->required();
  check->add_flag("--all", args->all, "fail on any missing option, the suites' own too (default: the guest's and "
                                      "the tracing core's only)");
  check->final_callback([args] {
    const fs::path path = config_of(args->what);
    auto text = base::read_file(path);
    if (!text) usage_error(text.error().message);
    auto values = vm::parse_kconfig_values(*text, path.string());
    if (!values) usage_error(values.error().message);
    const vm::ConfigCheck check = vm::check_kernel_config(*values);
    fmt::print("config: {}\n", path.string());
    print_missing(check, true, "missing, required (the guest or every suite needs it):");
    print_missing(check, false, "missing, not required (the guest works without it; a suite skips the tests that "
                                "need it):");
    const bool ok = check.ok(args->all);
    fmt::print("{}\n", check.missing.empty() ? "nothing missing"
                       : ok                  ? "runs the suites (some tests skip)"
                                             : "cannot run the suites as it is");
    exit_with(ok ? Exit::passed : Exit::failed);
  });
}

}  // namespace tracebed::cli
