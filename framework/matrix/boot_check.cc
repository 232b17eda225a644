#include "framework/matrix/boot_check.h"

#include <string_view>

#include <fmt/format.h>

namespace tracebed::matrix {

vm::GuestOptions guest_options_from_suite_args(const std::string& kernel, const std::vector<std::string>& args) {
  vm::GuestOptions o;
  o.kernel = kernel;
  for (std::string_view a : args) {
    auto value = [&](std::string_view flag, std::string& out) {
      if (!a.starts_with(flag)) return false;
      out = std::string(a.substr(flag.size()));
      return true;
    };
    (void)(value("--tracebed_launcher=", o.launcher) || value("--tracebed_libvirt_uri=", o.libvirt_uri) ||
           value("--tracebed_accel=", o.accel) || value("--tracebed_cmdline=", o.cmdline_extra));
  }
  return o;
}

Result<Booted> boot_once(const std::string& kernel, const std::vector<std::string>& suite_args) {
  vm::GuestOptions options = guest_options_from_suite_args(kernel, suite_args);
  TRACEBED_ASSIGN_OR_RETURN(std::unique_ptr<vm::Guest> guest, vm::Guest::boot(options));
  Booted b{guest->release(), guest->accelerator(), guest->boot_kind(), guest->boot_seconds()};
  // A guest that booted but faults on the way down still booted: the
  // suites' own guests will show the fault where it belongs.
  (void)guest->stop();
  return b;
}

TestResult did_not_boot(const std::string& kernel, const Error& why) {
  // "booting the K guest failed: " is what verdict() reads as not tested.
  TestResult t = TestResult::suite_row("(kernel)", State::fail,
                                       fmt::format("booting the {} guest failed: {}", kernel, why.message));
  t.name = "(boot)";
  return t;
}

}  // namespace tracebed::matrix
