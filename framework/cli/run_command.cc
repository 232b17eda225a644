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

struct RunArgs {
  vm::GuestOptions guest;
  std::string bootconfig;  // a file
  std::vector<std::string> command;
  unsigned timeout = 600;
  std::vector<std::string> copy_in, copy_out;
  bool verbose = false;
};

void declare_run_options(CLI::App& cmd, RunArgs& a) {
  add_guest_options(cmd, a.guest);
  add_timeout_option(cmd, a.timeout, "seconds the command may run");
  cmd.add_option("--launcher", a.guest.launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd.add_option("--libvirt-uri", a.guest.libvirt_uri, "libvirt connection (default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd.add_option("--bootconfig", a.bootconfig,
                 "boot configuration file to append to the initramfs (kernel option `bootconfig` added)")
      ->check(CLI::ExistingFile);
  cmd.add_option("--copy-in", a.copy_in, "HOST:GUEST file copied into the guest before the command (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_option("--copy-out", a.copy_out,
                 "GUEST:HOST file copied out of the guest after the command, whatever its status (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd.add_flag("-v,--verbose", a.verbose, "print boot time, accelerator and release to stderr");
  cmd.add_option("command", a.command, "command and arguments (after --)")->required();
}

// The guest's options with the boot configuration read in; usage errors
// for what cannot be used.
vm::GuestOptions guest_options(const RunArgs& a) {
  vm::GuestOptions options = a.guest;
  if (!a.bootconfig.empty()) {
    auto text = base::read_file(a.bootconfig);
    if (!text) usage_error(text.error().message);
    if (text->empty()) usage_error(fmt::format("--bootconfig {}: the file is empty", a.bootconfig));
    options.bootconfig = std::move(*text);
  }
  (void)resolve_kernel(load_catalogue(), options.kernel, "--kernel");
  return options;
}

// The command with its output passed on as it comes; its status, or 124
// when it timed out.
int run_in_guest(vm::Guest& g, const RunArgs& a) {
  auto pass_on = [](FILE* to) {
    return [to](std::string_view data) {
      std::fwrite(data.data(), 1, data.size(), to);
      std::fflush(to);
    };
  };
  auto r = vm::run_streaming(g, a.command, std::chrono::seconds(a.timeout), pass_on(stdout), pass_on(stderr));
  if (!r) fail(r.error().message);
  if (!r->timed_out) return r->shell_status();
  fmt::print(stderr, "tracebed: {} timed out after {} s in the guest\n", a.command[0], a.timeout);
  return static_cast<int>(Exit::timeout);
}

[[noreturn]] void run_command(const RunArgs& a) {
  const auto ins = copies(a.copy_in, "--copy-in"), outs = copies(a.copy_out, "--copy-out");
  for (const auto& [from, to] : ins)
    if (std::error_code ec; !std::filesystem::is_regular_file(from, ec))
      usage_error(fmt::format("--copy-in {}: no such file", from));
  auto guest = vm::Guest::boot(guest_options(a));
  if (!guest) cannot_run(guest.error().message);
  auto& g = **guest;
  if (a.verbose)
    fmt::print(stderr, "tracebed: {} ({}) ready in {:.2f} s under {} ({} launcher)\n", g.kernel_name(), g.release(),
               g.boot_seconds(), g.accelerator(), g.launcher());
  for (const auto& [from, to] : ins)
    if (Status st = g.agent().copy_in(from, to); !st) cannot_run(fmt::format("--copy-in {}: {}", from, st.error().message));
  int status = run_in_guest(g, a);
  // A failed copy out or a fault on the console fails a command that passed.
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
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "boot a guest, run a command in it, print its output");
  auto args = std::make_shared<RunArgs>();
  declare_run_options(*cmd, *args);
  cmd->final_callback([args] { run_command(*args); });
}

}  // namespace tracebed::cli
