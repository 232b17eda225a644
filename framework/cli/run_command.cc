// `tracebed run --kernel NAME -- CMD...`: boot, run CMD in the guest, print
// its output, exit with its status. A guest fault exits 1 with the console.
#include <cstdio>
#include <unistd.h>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/vm/guest.h"
#include "framework/vm/process.h"

namespace tracebed::cli {

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "boot a guest, run a command in it, print its output");
  struct Args {
    vm::GuestOptions guest;
    std::string bootconfig;  // a file
    std::vector<std::string> command;
    unsigned timeout = 600;
    bool verbose = false;
  };
  auto args = std::make_shared<Args>();
  add_guest_options(*cmd, args->guest);
  cmd->add_option("--timeout", args->timeout, "seconds the command may run")->capture_default_str();
  cmd->add_option("--launcher", args->guest.launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd->add_option("--libvirt-uri", args->guest.libvirt_uri,
                  "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd->add_option("--bootconfig", args->bootconfig,
                  "boot configuration file to append to the initramfs (kernel option `bootconfig` added)")
      ->check(CLI::ExistingFile);
  cmd->add_flag("-v,--verbose", args->verbose, "print boot time, accelerator and release to stderr");
  cmd->add_option("command", args->command, "command and arguments (after --)")->required();
  cmd->final_callback([args] {
    vm::GuestOptions options = args->guest;
    if (!args->bootconfig.empty()) {
      auto text = base::read_file(args->bootconfig);
      if (!text) fail(text.error().message);
      if (text->empty()) fail(fmt::format("--bootconfig {}: the file is empty", args->bootconfig));
      options.bootconfig = std::move(*text);
    }
    auto guest = vm::Guest::boot(options);
    if (!guest) fail(guest.error().message);
    auto& g = **guest;
    if (args->verbose)
      fmt::print(stderr, "tracebed: {} ({}) ready in {:.2f} s under {} ({} launcher)\n", g.kernel_name(),
                 g.release(), g.boot_seconds(), g.accelerator(), g.launcher());
    auto r = g.run(args->command, std::chrono::seconds(args->timeout));
    if (!r) fail(r.error().message);
    std::fwrite(r->out.data(), 1, r->out.size(), stdout);
    std::fflush(stdout);
    std::fwrite(r->err.data(), 1, r->err.size(), stderr);
    int status = r->shell_status();
    if (r->timed_out) {
      fmt::print(stderr, "tracebed: {} timed out after {} s in the guest\n", args->command[0], args->timeout);
      status = 124;
    }
    if (Status console = g.check_console(); !console) {
      fmt::print(stderr, "tracebed: {}\n", console.error().message);
      if (status == 0) status = 1;
    }
    if (Status st = g.stop(); !st) fmt::print(stderr, "tracebed: {}\n", st.error().message);
    std::fflush(stderr);
    std::exit(status);
  });
}

}  // namespace tracebed::cli
