// Modules of a catalogue kernel: installing a build kernel's modules into its
// cache entry, and building out-of-tree modules against it.
//
//   auto kos = build_module(files, "vmimages/modules/tracebed_events", 2);
//
// A build kernel's cache entry holds lib/modules/REL/ as `make
// modules_install` lays it out (kernel/, modules.dep, ...), plus build/, the
// tree an external module builds against (what Debian's linux-headers
// package holds, made by scripts/package/install-extmod-build). Modules built
// here go to lib/modules/REL/extra/ and depmod runs again, so the guest's
// modprobe finds them.
#pragma once

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"

namespace tracebed::vm {

// After `make bzImage modules` in `tree`: modules_install (stripped) into
// staged/lib/modules/RELEASE and the extmod tree into .../build. Commands
// and their output go to `log`.
Status install_built_modules(const std::filesystem::path& tree, const std::filesystem::path& staged,
                             const std::string& release, std::ofstream& log);

// The directory an external module builds against: MODULES_DIR/build, or an
// Error saying why this kernel has none (Debian kernels ship no build tree
// in the packages the catalogue pins).
Result<std::filesystem::path> module_build_tree(const KernelFiles& kernel);

// Builds the kbuild module in `source` (a directory with a Makefile and its
// sources; it is copied, the source stays clean) against `kernel` and
// installs each .ko under MODULES_DIR/extra. Returns the installed paths.
Result<std::vector<std::filesystem::path>> build_module(const KernelFiles& kernel, const std::filesystem::path& source,
                                                        unsigned jobs);

// The modules tracebed ships (vmimages/modules/*), installed or from the source.
std::filesystem::path own_modules_dir();

// Builds every directory of own_modules_dir() against `kernel`.
Result<std::vector<std::filesystem::path>> build_own_modules(const KernelFiles& kernel, unsigned jobs);

}  // namespace tracebed::vm
