// A Debian tool for a guest kernel: the tool's package of the kernel's
// series (linux-perf), or from the Debian release that ships the kernel
// (bpftrace), else of the nearest series,
// unpacked with the shared libraries it needs from the same suite, to run in
// the guest through its own ELF loader. Its glibc may be newer than the
// host's, so nothing of the host's /lib goes with it.
//
//   auto perf = fetch_debian_tool(catalogue, {"linux-perf", "perf"}, "6.12.107+deb13-cloud-amd64");
//   // perf->package_version == "6.12.117-1", perf->suite == "trixie"
//   options.image.files += guest_payloads(*perf);
//   guest.run(guest_command(*perf) + {"list"});
//
// The unpacked tree is cached in <cache>/tools/PACKAGE_VERSION (complete once
// tool.json is written); a second call with the same choice does not touch
// the network. Which version is chosen depends on the private apt lists
// (apt.h), refreshed only when they are missing.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/apt.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/images/image.h"

namespace tracebed::vm {

struct DebianToolRequest {
  std::string package;  // "linux-perf"
  std::string binary;   // "perf": usr/bin/perf or usr/bin/perf_<anything> in the package or its dependencies
};

struct DebianTool {
  std::string package;
  std::string package_version;  // "6.12.117-1"
  std::string suite;            // "trixie"
  std::string version_output;   // the first line of `BINARY --version` through the tree's loader ("" without one)
  std::filesystem::path root;   // <cache>/tools/PACKAGE_VERSION
  std::filesystem::path binary;                                // under root
  std::string interpreter;                                     // "ld-linux-x86-64.so.2"
  std::map<std::string, std::filesystem::path> libraries;      // soname -> file under root, the interpreter included
  std::vector<std::string> packages;                           // every package unpacked, "NAME VERSION"

  // "linux-perf 6.12.117-1 (trixie)"
  std::string describe() const;
  // "/opt/perf-6.12.117-1": where guest_payloads() puts the tool.
  std::string guest_root() const;
};

// The major.minor series a kernel release or a package version starts with:
// "5.10.0-32-cloud-amd64" and "5.10.223-1" -> {5, 10}; "7.3~rc7-1~exp1" -> {7, 3}.
std::optional<std::pair<int, int>> version_series(std::string_view version);

// Debian's version order (deb-version(5)): <0, 0, >0.
int compare_debian_versions(std::string_view a, std::string_view b);

// The candidate for a kernel: the highest version of the kernel's series;
// without one, the oldest series newer than the kernel's (perf, like most
// tracing tools, reads what older kernels offer), else the newest one.
Result<AptCandidate> choose_for_kernel(const std::vector<AptCandidate>& candidates, std::string_view kernel_release);

// The same for a package whose versions are not kernel versions (bpftrace,
// gawk): when none of `candidates` is of the kernel's series, the highest
// version in the Debian release that ships the kernel's series, which
// `kernel_packages` (linux-libc-dev's rows) tell ("bookworm-security" and
// "bookworm" are one release); else choose_for_kernel.
Result<AptCandidate> choose_from_kernels_release(const std::vector<AptCandidate>& candidates,
                                                 const std::vector<AptCandidate>& kernel_packages,
                                                 std::string_view kernel_release);

// Whether `BINARY --version`'s exit status shows the program ran: any status
// it chose (dash has no --version and exits 2), not the loader's 127 (a
// library missing) nor 128 + a signal (it crashed).
bool started_through_loader(int status);

// Chooses, downloads (through the catalogue's private apt sources) and unpacks.
Result<DebianTool> fetch_debian_tool(const Catalogue& catalogue, const DebianToolRequest& request,
                                     std::string_view kernel_release);

// The files for the guest image: the binary in guest_root()/bin, each library
// under its soname in guest_root()/lib.
std::vector<Payload> guest_payloads(const DebianTool& tool);

// The argv prefix that runs the tool in the guest through its own loader:
// {ROOT/lib/ld-linux-x86-64.so.2, --library-path, ROOT/lib, ROOT/bin/perf}.
std::vector<std::string> guest_command(const DebianTool& tool);

}  // namespace tracebed::vm
