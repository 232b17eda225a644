// The cache directory everything downloaded or built lives in, its content
// keys, and progress lines. Running a tool and whole-file reads and writes
// are base's (framework/base/process.h, files.h), named here too.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/result.h"

namespace tracebed::vm {

using base::Output;
using base::ProcessResult;
using base::run_process;
using base::write_file_atomic;

inline Result<std::string> read_text_file(const std::filesystem::path& path) { return base::read_file(path); }

// $TRACEBED_CACHE, else $XDG_CACHE_HOME/tracebed, else ~/.cache/tracebed.
std::filesystem::path cache_dir();

// Hex FNV-1a 64 of the data: a content key for cache file names.
std::string content_hash(std::string_view data);

// Progress lines ("tracebed: fetching ...") go to stderr so that `tracebed
// run` keeps stdout for the guest command's output.
void progress(std::string_view message);

}  // namespace tracebed::vm
