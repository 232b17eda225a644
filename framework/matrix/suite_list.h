// The guest suite binaries the build made. suites/CMakeLists.txt writes
// their paths, one a line, to tracebed-suites.txt beside the tracebed
// executable; `tracebed test` and `tracebed matrix` run what it lists.
#pragma once

#include <filesystem>
#include <vector>

namespace tracebed::matrix {

// The list beside the running executable; empty when there is none (no
// suites were built, or the executable was moved away from its build).
std::vector<std::filesystem::path> built_suites();

// The paths listed in `file`, empty lines skipped; empty when unreadable.
std::vector<std::filesystem::path> read_suite_list(const std::filesystem::path& file);

}  // namespace tracebed::matrix
