// The guest suite binaries the build made. suites/CMakeLists.txt writes
// their paths, one a line, to tracebed-suites.txt beside the tracebed
// executable; an installation has the list in <prefix>/lib/tracebed/ with
// the suites named relative to it (cmake/install.cmake). `tracebed test` and
// `tracebed matrix` run what it lists.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::matrix {

// The list beside the running executable; empty when there is none (no
// suites were built, or the executable was moved away from its build).
std::vector<std::filesystem::path> built_suites();

// The paths listed in `file`, empty lines skipped; empty when unreadable.
std::vector<std::filesystem::path> read_suite_list(const std::filesystem::path& file);

// The short name users type for a suite binary: tracebed_suite_hist -> hist.
std::string short_suite_name(const std::filesystem::path& suite);

// Suites that run only when named (--suites): the kernel's own selftests
// (suites/kselftest) take many minutes a kernel under TCG, and bpftrace
// (suites/tooling/bpftrace) brings LLVM into the guest.
bool on_request_only(const std::filesystem::path& suite);
// `all` without the on-request suites.
std::vector<std::filesystem::path> default_suites(const std::vector<std::filesystem::path>& all);

// The suite binaries `wanted` names, in the order named. A name is a
// binary's short or full name, or a GoogleTest suite the binary holds
// (`Hist`, `TraceCmd`: what --filter names), compared without case;
// `groups_of` lists a binary's GoogleTest suites and is asked only when a
// name is not a binary's. An unknown name is an Error listing the valid ones.
Result<std::vector<std::filesystem::path>> choose_suites(
    const std::vector<std::filesystem::path>& all, const std::vector<std::string>& wanted,
    const std::function<std::vector<std::string>(const std::filesystem::path&)>& groups_of);

}  // namespace tracebed::matrix
