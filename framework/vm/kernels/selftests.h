// The kernel's own tracing selftests (tools/testing/selftests/ftrace and
// user_events) from the Debian linux-source package of the kernel's series.
//
//   auto st = fetch_selftests(catalogue, spec, "6.12.107+deb13-cloud-amd64");
//   if (!st) skip(st.error().message);
//   run st->ftrace() / "ftracetest" in the guest; build_user_events(*st) on the host.
//
// Only tools/testing/selftests/{ftrace,user_events,kselftest*} and the uapi
// header user_events.h are unpacked from the source tarball, into
// <cache>/selftests/NAME_VERSION_SHA, once per package: the .deb is fetched
// and sha256-checked like a kernel's (fetch_deb).
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"

namespace tracebed::vm {

struct SelftestSource {
  DebPackage package;
  std::string suite;
  // Empty when the pin is the kernel's own; else why another series is used
  // ("no linux-source pinned for bzImage (release 6.13.2): linux-source-6.12, the nearest series").
  std::string note;
};

struct Selftests {
  SelftestSource source;
  std::filesystem::path root;  // holds tools/testing/selftests/...
  std::filesystem::path selftests() const { return root / "tools/testing/selftests"; }
  std::filesystem::path ftrace() const { return selftests() / "ftrace"; }
  std::filesystem::path user_events() const { return selftests() / "user_events"; }
};

// "MAJOR.MINOR" of a Debian version or a kernel release ("7.3~rc7-1~exp1",
// "5.10.0-32-cloud-amd64" -> "7.3", "5.10"); empty when it has none.
std::string kernel_series(std::string_view version);

// The pin for `spec`: its own, else (a local kernel, or a catalogue entry
// without one) the catalogue's pin of the same series, else the nearest
// series, saying so. `release` is the kernel's `uname -r` (or its bzImage's
// version string).
Result<SelftestSource> selftest_source(const Catalogue& catalogue, const KernelSpec& spec, std::string_view release);

// Fetches and unpacks (once) the selftests of `source`.
Result<Selftests> fetch_selftests(const Catalogue& catalogue, const SelftestSource& source);

// ftracetest's cases: every test.d/**/*.tc, relative to test.d, sorted.
Result<std::vector<std::string>> ftracetest_cases(const Selftests& selftests);

// The user_events selftest programs (ftrace_test, dyn_test, perf_test,
// abi_test: those the tree has), built static on the host with the
// kselftest harness and the tree's own uapi user_events.h, once, into
// root/user_events-bin. Returns that directory.
Result<std::filesystem::path> build_user_events(const Selftests& selftests);

// ftracetest's helper program (its Makefile's TEST_GEN_FILES: poll, which
// trigger-hist-poll.tc runs from the ftrace directory), built static on
// the host into root/ftrace-bin, once. Returns that directory; a tree
// without poll.c (before 6.11) gives an empty one.
Result<std::filesystem::path> build_ftrace_helpers(const Selftests& selftests);

}  // namespace tracebed::vm
