// Where tracebed's own files are when it runs from an installation rather
// than from its build tree. A build compiles in the build and source paths
// of the agent, the probe target, the suites' host tools and the kernel
// catalogue; `cmake --install` (and the .deb) put them under one prefix:
//   bin/tracebed
//   lib/tracebed/     the guest suites, tracebed-agent, tracebed-probe-target,
//                     host tools and tracebed-suites.txt
//   share/tracebed/   kernels.json and its kernel recipes, fixtures the suites read
#pragma once

#include <filesystem>

namespace tracebed::base {

// The running executable; empty when /proc cannot say.
std::filesystem::path executable_path();

// The directory of the running executable.
std::filesystem::path executable_dir();

// The file of `built`'s name in the running executable's directory, else in
// <prefix>/lib/tracebed/ beside its bin/ (an installation's copy wins even
// when the build tree it came from still exists); else `built`, the path the
// build compiled in, so that an error names the path that was expected.
std::filesystem::path installed_or_built(const std::filesystem::path& built);

// <prefix>/share/tracebed/<relative> when it exists beside the running
// executable's prefix; else source_dir/<source_relative>.
std::filesystem::path shared_data(const std::filesystem::path& relative, const std::filesystem::path& source_dir,
                                  const std::filesystem::path& source_relative);

}  // namespace tracebed::base
