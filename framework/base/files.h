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

// Copies `from` to `to` (replaced if it exists), in pieces. Unlike
// std::filesystem::copy_file, whose sendfile path says "Input/output error"
// for a full disk, the Error has errno's own words and names the file;
// a partial `to` is removed.
Status copy_file(const std::filesystem::path& from, const std::filesystem::path& to);

}  // namespace tracebed::base
