// The guest options `tracebed run` and `tracebed shell` share.
#include "framework/cli/commands.h"
#include "framework/vm/guest.h"

namespace tracebed::cli {

void add_guest_options(CLI::App& cmd, vm::GuestOptions& options) {
  cmd.add_option("-k,--kernel", options.kernel, "catalogue name or bzImage path (default: debian-6.12)");
  cmd.add_option("--cpus", options.cpus, "guest CPUs")->capture_default_str();
  cmd.add_option("--memory", options.memory_mb, "guest memory in MiB")->capture_default_str();
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

}  // namespace tracebed::cli
