// `tracebed cache list [-v]` and `tracebed cache prune --older-than D
// [--kind K] [--dry-run]`: what the cache holds, and removing what has not
// been used for a while (framework/vm/cache/cache_inventory.h).
#include <map>

#include <fmt/format.h>

#include "framework/cli/commands.h"
#include "framework/vm/cache/cache_inventory.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::cli {
namespace {

std::string human(uint64_t bytes) {
  if (bytes >= (1ull << 30)) return fmt::format("{:.1f} GiB", bytes / double(1ull << 30));
  if (bytes >= (1ull << 20)) return fmt::format("{:.1f} MiB", bytes / double(1ull << 20));
  if (bytes >= (1ull << 10)) return fmt::format("{:.1f} KiB", bytes / double(1ull << 10));
  return fmt::format("{} B", bytes);
}

std::string age(std::filesystem::file_time_type t) {
  auto hours = std::chrono::duration_cast<std::chrono::hours>(std::filesystem::file_time_type::clock::now() - t).count();
  return hours >= 48 ? fmt::format("{} d", hours / 24) : fmt::format("{} h", hours);
}

}  // namespace

void add_cache_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("cache", "what the cache holds (kernels, images, snapshots, ...) and pruning it");
  cmd->require_subcommand(1);
  auto verbose = std::make_shared<bool>(false);
  auto* list = cmd->add_subcommand("list", "size and item count per kind; -v lists every item");
  list->add_flag("-v,--verbose", *verbose, "every item with its size and when it was last used");
  list->final_callback([verbose] {
    auto root = vm::cache_dir();
    auto items = vm::cache_items(root);
    std::vector<std::string> order;
    std::map<std::string, std::pair<size_t, uint64_t>> per_kind;
    uint64_t total = 0;
    for (const auto& i : items) {
      if (!per_kind.count(i.kind)) order.push_back(i.kind);
      per_kind[i.kind].first++;
      per_kind[i.kind].second += i.bytes;
      total += i.bytes;
    }
    fmt::print("cache: {}\n{:<10} {:>6} {:>10}  {}\n", root.string(), "KIND", "ITEMS", "SIZE", "PRUNE");
    for (const auto& k : order)
      fmt::print("{:<10} {:>6} {:>10}  {}\n", k, per_kind[k].first, human(per_kind[k].second),
                 vm::prunable_kind(k) ? "yes" : "kept");
    fmt::print("{:<10} {:>6} {:>10}\n", "total", items.size(), human(total));
    if (*verbose)
      for (const auto& i : items)
        fmt::print("{:<10} {:>10} {:>6}{}  {}\n", i.kind, human(i.bytes), age(i.last_used), i.in_use ? " in use" : "",
                   i.path.filename().string());
  });

  struct PruneArgs {
    std::string older_than;
    std::vector<std::string> kinds;
    bool dry_run = false;
  };
  auto p = std::make_shared<PruneArgs>();
  auto* prune = cmd->add_subcommand("prune", "remove items not used for a while (fetched or built again when needed)");
  prune->add_option("--older-than", p->older_than, "last used more than this long ago: 30d, 12h, 45m")->required();
  prune->add_option("--kind", p->kinds, "only these kinds (kernels, images, snapshots, tools, debs, libvirt, run)")
      ->delimiter(',');
  prune->add_flag("--dry-run", p->dry_run, "say what would go, remove nothing");
  prune->final_callback([p] {
    std::chrono::seconds older{};
    if (!vm::parse_duration(p->older_than, older))
      usage_error(fmt::format("--older-than {}: expected a number with d, h, m or s (e.g. 30d)", p->older_than));
    for (const auto& k : p->kinds)
      if (!vm::prunable_kind(k)) usage_error(fmt::format("--kind {}: not a kind prune removes", k));
    auto r = vm::prune_cache(vm::cache_dir(), older, p->kinds, p->dry_run);
    for (const auto& i : r.removed)
      fmt::print("{} {}/{} ({}, last used {} ago)\n", p->dry_run ? "would remove" : "removed", i.kind,
                 i.path.filename().string(), human(i.bytes), age(i.last_used));
    fmt::print("{} {} items, {}\n", p->dry_run ? "would free" : "freed", r.removed.size(), human(r.bytes));
    for (const auto& e : r.errors) fmt::print(stderr, "tracebed: cannot remove {}\n", e);
    std::fflush(stdout);
    exit_with(r.errors.empty() ? Exit::passed : Exit::failed);
  });
}

}  // namespace tracebed::cli
