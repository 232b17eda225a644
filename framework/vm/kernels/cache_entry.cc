#include "framework/vm/kernels/cache_entry.h"

#include <map>
#include <mutex>
#include <system_error>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/text.h"
#include "framework/vm/kernels/catalogue.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

namespace {

// What an entry's files looked like when they were last found whole.
struct Seen {
  std::vector<std::pair<uintmax_t, fs::file_time_type>> files;
  bool operator==(const Seen&) const = default;
};

Seen seen_now(const fs::path& root, const std::vector<fs::path>& files) {
  Seen s;
  for (const fs::path& f : files) {
    std::error_code size_ec, time_ec;
    const uintmax_t size = fs::file_size(root / f, size_ec);
    const auto time = fs::last_write_time(root / f, time_ec);
    s.files.emplace_back(size_ec ? 0 : size, time);
  }
  return s;
}

std::mutex g_mutex;
std::map<fs::path, Seen> g_checked;

}  // namespace

Result<std::string> completion_text(const fs::path& root, const std::string& release,
                                    const std::vector<fs::path>& files) {
  std::string text = release + "\n";
  for (const fs::path& f : files) {
    if (f.empty() || !fs::is_regular_file(root / f)) continue;
    TRACEBED_ASSIGN_OR_RETURN(std::string sum, sha256_of(root / f));
    text += fmt::format("sha256 {} {}\n", f.string(), sum);
  }
  return text;
}

Status check_cache_entry(const fs::path& root, const std::vector<fs::path>& files) {
  const Seen now = seen_now(root, files);
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_checked.find(root); it != g_checked.end() && it->second == now) return {};
  }
  TRACEBED_ASSIGN_OR_RETURN(std::string marker, base::read_file(root / ".complete"));
  std::map<std::string, std::string, std::less<>> recorded;
  for (std::string_view line : base::split_lines(marker)) {
    auto words = base::split_words(line);
    if (words.size() == 3 && words[0] == "sha256") recorded.emplace(words[1], words[2]);
  }
  if (recorded.empty()) {
    // A marker written before the hashes were: record them as they are.
    const std::string release(marker.substr(0, marker.find('\n')));
    TRACEBED_ASSIGN_OR_RETURN(std::string text, completion_text(root, release, files));
    TRACEBED_TRY(base::write_file_atomic(root / ".complete", text));
  } else {
    for (const fs::path& f : files) {
      auto it = recorded.find(f.string());
      if (it == recorded.end()) continue;  // not a file this entry keeps
      if (!fs::exists(root / f))
        return Error{fmt::format("{}: missing, though {} lists it", (root / f).string(), (root / ".complete").string())};
      TRACEBED_ASSIGN_OR_RETURN(std::string sum, sha256_of(root / f));
      if (sum != it->second)
        return Error{fmt::format("{} has sha256 {}, not the {} it had when it was cached", (root / f).string(), sum,
                                 it->second)};
    }
  }
  std::lock_guard lock(g_mutex);
  g_checked[root] = now;
  return {};
}

}  // namespace tracebed::vm
