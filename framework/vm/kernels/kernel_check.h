// What a kernel lacks to run the suites, read from its configuration
// (`tracebed kernels check`, docs/guests.md "The minimum config").
//
//   auto where = find_kernel_config("/src/linux");        // DIR/.config
//   auto text = base::read_file(*where);
//   auto values = parse_kconfig_values(*text, where->string());
//   ConfigCheck check = check_kernel_config(*values);
//   if (!check.ok()) ...  // check.missing names each option and who needs it
//
// The guest's needs are the first section of our own kernel's fragment
// (vmimages/kernels/tracebed-7.2/config.fragment, read at build time); the
// tracing options are what each suite's tests exercise. A suite whose
// options are missing still runs: its tests skip with the reason.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/kernel_build.h"

namespace tracebed::vm {

struct ConfigNeed {
  std::string option;    // CONFIG_NAME
  std::string accepted;  // "y", or "y,m" where the guest image loads the module
  std::string who;       // "guest", "tracing" (every suite), or a suite's short name
  bool required = true;  // false: only some suites or some tests need it
};

// Every need, the guest's first, then the tracing core, then per suite.
const std::vector<ConfigNeed>& config_needs();

struct ConfigMissing {
  ConfigNeed need;
  std::string value;  // what the config has: "n" when it is not set
};

struct ConfigCheck {
  std::vector<ConfigMissing> missing;
  // No required option is missing (with `all`: no option at all).
  bool ok(bool all = false) const;
};

ConfigCheck check_kernel_config(const KconfigValues& config);

// Where the config of a kernel build tree (DIR/.config) or of a kernel image
// is: the .config of the build tree it sits in (arch/x86/boot/bzImage),
// config-RELEASE beside vmlinuz-RELEASE (/boot and Debian's packages), or a
// `config` beside it. An Error names the places looked at.
Result<std::filesystem::path> find_kernel_config(const std::filesystem::path& dir_or_image);

}  // namespace tracebed::vm
