// `tracebed run --kernel NAME [--copy-in HOST:GUEST] [--copy-out GUEST:HOST]
// -- CMD...`: boot, copy files in, run CMD in the guest with its output
// passed on as it comes, copy files out, exit with CMD's status (124 when
// it timed out). A guest fault during CMD exits 1 with the console; a
// kernel that cannot be fetched or booted, 125.
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"
#include "framework/vm/guests/guest_stream.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::cli {
namespace {

// "FROM:TO" pairs; the first ':' splits them.
std::vector<std::pair<std::string, std::string>> copies(const std::vector<std::string>& specs, const char* option) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& spec : specs) {
    size_t colon = spec.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == spec.size())
      usage_error(fmt::format("{} {}: expected FROM:TO", option, spec));
    out.emplace_back(spec.substr(0, colon), spec.substr(colon + 1));
  }
  return out;
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "boot a guest, run a command in it, print its output");
  struct Args {
    vm::GuestOptions guest;
    std::string bootconfig;  // a file
    std::vector<std::string> command;
    unsigned timeout = 600;
    std::vector<std::string> copy_in, copy_out;
    bool verbose = false;
  };
  auto args = std::make_shared<Args>();
  add_guest_options(*cmd, args->guest);
  add_timeout_option(*cmd, args->timeout, "seconds the command may run");
  cmd->add_option("--launcher", args->guest.launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd->add_option("--libvirt-uri", args->guest.libvirt_uri,
                  "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd->add_option("--bootconfig", args->bootconfig,
                  "boot configuration file to append to the initramfs (kernel option `bootconfig` added)")
      ->check(CLI::ExistingFile);
  cmd->add_option("--copy-in", args->copy_in, "HOST:GUEST file copied into the guest before the command (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--copy-out", args->copy_out,
                  "GUEST:HOST file copied out of the guest after the command, whatever its status (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("-v,--verbose", args->verbose, "print boot time, accelerator and release to stderr");
  cmd->add_option("command", args->command, "command and arguments (after --)")->required();
  cmd->final_callback([args] {
    const auto ins = copies(args->copy_in, "--copy-in"), outs = copies(args->copy_out, "--copy-out");
    vm::GuestOptions options = args->guest;
    if (!args->bootconfig.empty()) {
      auto text = base::read_file(args->bootconfig);
      if (!text) usage_error(text.error().message);
      if (text->empty()) usage_error(fmt::format("--bootconfig {}: the file is empty", args->bootconfig));
      options.bootconfig = std::move(*text);
    }
    for (const auto& [from, to] : ins)
      if (std::error_code ec; !std::filesystem::is_regular_file(from, ec))
        usage_error(fmt::format("--copy-in {}: no such file", from));
    (void)resolve_kernel(load_catalogue(), options.kernel, "--kernel");
    auto guest = vm::Guest::boot(options);
    if (!guest) cannot_run(guest.error().message);
    auto& g = **guest;
    if (args->verbose)
      fmt::print(stderr, "tracebed: {} ({}) ready in {:.2f} s under {} ({} launcher)\n", g.kernel_name(),
                 g.release(), g.boot_seconds(), g.accelerator(), g.launcher());
    for (const auto& [from, to] : ins)
      if (Status st = g.agent().copy_in(from, to); !st)
        cannot_run(fmt::format("--copy-in {}: {}", from, st.error().message));
    auto pass_on = [](FILE* to) {
      return [to](std::string_view data) {
        std::fwrite(data.data(), 1, data.size(), to);
        std::fflush(to);
      };
    };
    auto r = vm::run_streaming(g, args->command, std::chrono::seconds(args->timeout), pass_on(stdout),
                               pass_on(stderr));
    if (!r) fail(r.error().message);
    int status = r->shell_status();
    if (r->timed_out) {
      fmt::print(stderr, "tracebed: {} timed out after {} s in the guest\n", args->command[0], args->timeout);
      status = static_cast<int>(Exit::timeout);
    }
    for (const auto& [from, to] : outs) {
      if (Status st = g.agent().copy_out(from, to); !st) {
        fmt::print(stderr, "tracebed: --copy-out {}: {}\n", from, st.error().message);
        if (status == 0) status = 1;
      }
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
