// What the cache holds ($TRACEBED_CACHE, vm::cache_dir()) and pruning it,
// for `tracebed cache list|prune`. Each kind is a directory of the cache;
// an item is one entry in it (a kernel, a guest image, a snapshot, a .deb).
// "Last used" is the newest modification time inside an item: kernels and
// images are written once and then only read, so pruning by it removes what
// has not been fetched, built or saved again for that long; everything
// removed is fetched or built again on next use.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace tracebed::vm {

struct CacheItem {
  std::string kind;  // the directory: kernels, images, snapshots, debs, tools, run, ...
  std::filesystem::path path;
  uint64_t bytes = 0;
  std::filesystem::file_time_type last_used;
  bool in_use = false;  // a run directory of a live process
};

// Every item of every kind, kinds in a fixed order, items by path.
std::vector<CacheItem> cache_items(const std::filesystem::path& root);

// Kinds `prune` removes items of; the others (apt lists, the accelerator
// probe, suite timings) are small and worth keeping.
bool prunable_kind(const std::string& kind);

// The process a run directory belongs to, from its name ("<pid>-<n>", or
// "test-<pid>"; what follows the pid, such as "/agent.sock", is ignored);
// 0 when the name holds none.
long run_dir_owner(std::string_view name);

struct PruneResult {
  std::vector<CacheItem> removed;
  uint64_t bytes = 0;
  std::vector<std::string> errors;  // "path: why"
};

// Removes the items of prunable kinds (or only of `kinds`, when given) last
// used longer than `older_than` before `now`, skipping items in use.
PruneResult prune_cache(const std::filesystem::path& root, std::chrono::seconds older_than,
                        const std::vector<std::string>& kinds, bool dry_run,
                        std::filesystem::file_time_type now = std::filesystem::file_time_type::clock::now());

// "30d", "12h", "45m", "90s" (or a bare number of seconds).
bool parse_duration(const std::string& text, std::chrono::seconds& out);

}  // namespace tracebed::vm
