// `tracebed shell --kernel NAME`: a shell on the guest's console.
#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::cli {

void add_shell_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("shell", "boot a guest with an interactive shell on its console");
  auto options = std::make_shared<vm::GuestOptions>();
  add_guest_options(*cmd, *options);
  cmd->final_callback([options] {
    options->interactive = true;
    fmt::print(stderr, "tracebed: exit the shell (or press Ctrl-A X) to power the guest off\n");
    (void)resolve_kernel(load_catalogue(), options->kernel, "--kernel");
    auto guest = vm::Guest::boot(*options);
    if (!guest) cannot_run(guest.error().message);
    // The guest powering off is the shell's normal end; QEMU failing is
    // the guest lost, as for every command (125).
    const int qemu = (*guest)->wait();
    if (qemu != 0) cannot_run(fmt::format("QEMU exited with status {}", qemu));
    std::exit(0);
  });
}

}  // namespace tracebed::cli
