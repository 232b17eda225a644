#include "framework/vm/cache/cache_inventory.h"

#include <algorithm>
#include <cstdlib>

#include <fmt/format.h>

namespace tracebed::vm {
namespace {

namespace fs = std::filesystem;

constexpr const char* kKinds[] = {"kernels", "images", "snapshots", "tools", "debs",
                                  "apt",     "libvirt", "run",      "timings", "accel"};

void measure(const fs::path& p, CacheItem& item) {
  std::error_code ec;
  auto note = [&](const fs::directory_entry& e) {
    std::error_code e2;
    if (e.is_symlink(e2)) return;
    if (e.is_regular_file(e2)) item.bytes += e.file_size(e2);
    auto t = e.last_write_time(e2);
    if (!e2 && t > item.last_used) item.last_used = t;
  };
  item.last_used = fs::last_write_time(p, ec);
  fs::directory_entry top(p, ec);
  note(top);
  if (!top.is_directory(ec)) return;
  for (auto it = fs::recursive_directory_iterator(p, fs::directory_options::skip_permission_denied, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec))
    note(*it);
}

// A run directory is in use while the process it belongs to lives.
bool live_run_dir(const fs::path& p) {
  long pid = run_dir_owner(p.filename().string());
  std::error_code ec;
  return pid > 0 && fs::exists(fmt::format("/proc/{}", pid), ec);
}

}  // namespace

long run_dir_owner(std::string_view name) {
  if (name.starts_with("test-")) name.remove_prefix(5);
  std::string digits(name.substr(0, name.find_first_not_of("0123456789")));
  return digits.empty() ? 0 : std::strtol(digits.c_str(), nullptr, 10);
}

bool prunable_kind(const std::string& kind) {
  return kind == "kernels" || kind == "images" || kind == "snapshots" || kind == "tools" || kind == "debs" ||
         kind == "libvirt" || kind == "run";
}

std::vector<CacheItem> cache_items(const fs::path& root) {
  std::vector<CacheItem> out;
  std::error_code ec;
  for (const char* kind : kKinds) {
    std::vector<CacheItem> items;
    for (const auto& e : fs::directory_iterator(root / kind, ec)) {
      CacheItem item;
      item.kind = kind;
      item.path = e.path();
      measure(e.path(), item);
      item.in_use = std::string_view(kind) == "run" && live_run_dir(e.path());
      items.push_back(std::move(item));
    }
    std::sort(items.begin(), items.end(), [](const auto& a, const auto& b) { return a.path < b.path; });
    out.insert(out.end(), items.begin(), items.end());
  }
  return out;
}

PruneResult prune_cache(const fs::path& root, std::chrono::seconds older_than, const std::vector<std::string>& kinds,
                        bool dry_run, fs::file_time_type now) {
  PruneResult r;
  for (auto& item : cache_items(root)) {
    bool chosen = kinds.empty() ? prunable_kind(item.kind)
                                : std::find(kinds.begin(), kinds.end(), item.kind) != kinds.end();
    if (!chosen || item.in_use || now - item.last_used < older_than) continue;
    if (!dry_run) {
      std::error_code ec;
      fs::remove_all(item.path, ec);
      if (ec) {
        r.errors.push_back(fmt::format("{}: {}", item.path.string(), ec.message()));
        continue;
      }
    }
    r.bytes += item.bytes;
    r.removed.push_back(std::move(item));
  }
  return r;
}

bool parse_duration(const std::string& text, std::chrono::seconds& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  long long n = std::strtoll(text.c_str(), &end, 10);
  if (end == text.c_str() || n < 0) return false;
  std::string unit(end);
  long long scale = unit.empty() || unit == "s" ? 1 : unit == "m" ? 60 : unit == "h" ? 3600 : unit == "d" ? 86400 : 0;
  if (!scale) return false;
  out = std::chrono::seconds(n * scale);
  return true;
}

}  // namespace tracebed::vm
