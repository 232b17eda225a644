// The `.complete` marker of a kernel's cache entry (<cache>/kernels/NAME-HASH):
// written last, once everything is in place, so an entry without it is
// unfinished. It holds the kernel's release on its first line, then one
// "sha256 FILE HASH" line for each file a guest boots from (bzImage and
// config, relative to the entry), so a file damaged after it was cached
// (a full disk, a stray write, a cut copy) is found before it is booted.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

// The files a kernel built from a recipe boots from, hashed in its marker.
inline const std::vector<std::filesystem::path> kBuiltKernelFiles = {"bzImage", "config"};

// The marker's text for `release` and the hashes of those of `files`
// (relative to `root`) that exist.
Result<std::string> completion_text(const std::filesystem::path& root, const std::string& release,
                                    const std::vector<std::filesystem::path>& files);

// Whether the files the entry's marker lists still have their hashes: an
// Error naming the first that does not. Each entry is hashed once per
// process while its files keep their size and time. A marker from before
// the hashes (release only) gets them now, from the files as they are.
Status check_cache_entry(const std::filesystem::path& root, const std::vector<std::filesystem::path>& files);

}  // namespace tracebed::vm
