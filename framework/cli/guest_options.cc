// The guest options `tracebed run` and `tracebed shell` share, and naming
// a kernel with the exit status each failure means.
#include <charconv>

#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/tracefs/guest_file_ops.h"
#include "framework/tracefs/tracefs.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::cli {

vm::Catalogue load_catalogue() {
  auto c = vm::Catalogue::load();
  if (!c) cannot_run(c.error().message);
  return std::move(c).value();
}

vm::KernelSpec resolve_kernel(const vm::Catalogue& catalogue, const std::string& name, std::string_view option) {
  auto spec = catalogue.resolve(name.empty() ? catalogue.default_kernel() : name);
  if (!spec) usage_error(option.empty() ? spec.error().message : fmt::format("{}: {}", option, spec.error().message));
  return std::move(spec).value();
}

namespace {
constexpr unsigned kWeek = 7 * 24 * 3600;
}  // namespace

CLI::Option* add_timeout_option(CLI::App& cmd, unsigned& seconds, const std::string& help) {
  return cmd.add_option("--timeout", seconds, help)
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) -> std::string {
            unsigned long long v = 0;
            auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec != std::errc() || end != text.data() + text.size() || v < 1 || v > kWeek)
              return fmt::format("'{}' is not a whole number of seconds from 1 to {} (a week)", text, kWeek);
            return "";
          },
          "SECONDS"));
}

void add_guest_options(CLI::App& cmd, vm::GuestOptions& options) {
  cmd.add_option("-k,--kernel", options.kernel, "catalogue name or bzImage path (default: debian-6.12)");
  // QEMU's pc machine takes at most 255 CPUs; below 64 MiB no guest image fits.
  cmd.add_option("--cpus", options.cpus, "guest CPUs (1 to 255)")->capture_default_str()->check(CLI::Range(1u, 255u));
  cmd.add_option("--memory", options.memory_mb, "guest memory in MiB (64 to 1048576)")
      ->capture_default_str()
      ->check(CLI::Range(64u, 1u << 20));
  cmd.add_option("--accel", options.accel, "kvm or tcg (default: probe)")->check(CLI::IsMember({"kvm", "tcg"}));
  cmd.add_option_function<std::vector<std::string>>(
         "--tool",
         [&options](const std::vector<std::string>& tools) {
           for (const auto& t : tools) options.image.tools.emplace_back(t);
         },
         "host executable to copy in with its libraries (repeatable)")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

std::unique_ptr<vm::Guest> boot_guest(const std::string& kernel, const std::string& accel) {
  vm::GuestOptions options;
  options.kernel = kernel;
  options.accel = accel;
  (void)resolve_kernel(load_catalogue(), options.kernel, "--kernel");
  auto guest = vm::Guest::boot(options);
  if (!guest) cannot_run(guest.error().message);
  return std::move(guest).value();
}

tracefs::Tracefs tracefs_of(vm::Guest& guest) {
  return tracefs::Tracefs(std::make_shared<tracefs::GuestFileOps>(guest.agent(), guest.release()),
                          std::string(tracefs::kDefaultRoot));
}

}  // namespace tracebed::cli
