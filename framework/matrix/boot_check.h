// One boot of a kernel before its suites start. A kernel that cannot boot
// is found once, with what its console printed, instead of by every suite
// binary waiting out the boot timeout; a kernel that boots leaves the
// snapshot the suites then restore from (framework/vm/guests/snapshot.h).
//
//   auto booted = boot_once("debian-6.12", {"--tracebed_launcher=libvirt"});
//   if (!booted) return did_not_boot(kernel, booted.error());
#pragma once

#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/matrix/results.h"
#include "framework/vm/guests/guest.h"

namespace tracebed::matrix {

struct Booted {
  std::string release, accelerator;
  std::string kind;  // "boot" or "restore"
  double seconds = 0;
};

// The guest options the suite binaries take from these flags
// (--tracebed_launcher=, --tracebed_libvirt_uri=, --tracebed_accel=,
// --tracebed_cmdline=; framework/testing/guest_environment.cc); other flags
// are the suites' own and ignored.
vm::GuestOptions guest_options_from_suite_args(const std::string& kernel, const std::vector<std::string>& args);

// Boots the kernel as a suite with no tools of its own would, waits for
// the agent and powers the guest off. The Error is the boot's, with the
// console excerpt.
Result<Booted> boot_once(const std::string& kernel, const std::vector<std::string>& suite_args);

// The one result row of a kernel that did not boot; verdict() reads it as
// "not tested" (exit status 125), reports show "did not boot".
TestResult did_not_boot(const std::string& kernel, const Error& why);

}  // namespace tracebed::matrix
