// `tracebed shell --kernel NAME`: a shell on the guest's console.
#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/vm/guest.h"

namespace tracebed::cli {

void add_shell_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("shell", "boot a guest with an interactive shell on its console");
  struct Args {
    std::string kernel, accel;
    unsigned cpus = 2, memory = 512;
    std::vector<std::string> tools;
  };
  auto args = std::make_shared<Args>();
  cmd->add_option("-k,--kernel", args->kernel, "catalogue name or bzImage path (default: debian-6.12)");
  cmd->add_option("--cpus", args->cpus, "guest CPUs")->capture_default_str();
  cmd->add_option("--memory", args->memory, "guest memory in MiB")->capture_default_str();
  cmd->add_option("--accel", args->accel, "kvm or tcg (default: probe)")
      ->check(CLI::IsMember({"kvm", "tcg"}));
  cmd->add_option("--tool", args->tools, "host executable to copy in with its libraries (repeatable)");
  cmd->final_callback([args] {
    vm::GuestOptions options;
    options.kernel = args->kernel;
    options.cpus = args->cpus;
    options.memory_mb = args->memory;
    options.accel = args->accel;
    options.interactive = true;
    for (const auto& t : args->tools) options.image.tools.emplace_back(t);
    fmt::print(stderr, "tracebed: exit the shell (or press Ctrl-A X) to power the guest off\n");
    auto guest = vm::Guest::boot(options);
    if (!guest) fail(guest.error().message);
    std::exit((*guest)->wait());
  });
}

}  // namespace tracebed::cli
