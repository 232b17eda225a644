// Whole files in and out: a file read into memory in one go, and a file
// replaced atomically (a reader sees the old contents or the new, never a
// torn write: cache entries other processes read while we write them).
//
//   TRACEBED_ASSIGN_OR_RETURN(std::string config, base::read_file(root / ".config"));
//   TRACEBED_TRY(base::write_file_atomic(root / ".complete", release + "\n"));
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "framework/base/result.h"

namespace tracebed::base {

// The file's bytes; an Error names the path and errno's words.
Result<std::string> read_file(const std::filesystem::path& path);

// Writes `data` beside `path` and renames it over `path`, creating the
// parent directories first.
Status write_file_atomic(const std::filesystem::path& path, std::string_view data);

}  // namespace tracebed::base
