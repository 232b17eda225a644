#include "framework/vm/guests/snapshot.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <map>
#include <mutex>

#include <nlohmann/json.hpp>

#include "framework/base/process.h"
#include "framework/base/text.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

bool snapshots_disabled_by_environment() {
  const char* v = std::getenv("TRACEBED_NO_SNAPSHOT");
  return v && *v && std::string_view(v) != "0";
}

namespace {

// Path, size and modification time: a rebuilt kernel or QEMU at the same
// path is a different file. (Hashing a 10 MB kernel per boot would also do,
// but the initramfs's path already is its content hash.)
std::string file_identity(const std::string& path) {
  struct stat st{};
  if (path.empty() || path[0] != '/' || stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return "";
  return fmt::format("{}:{}:{}.{}", path, st.st_size, st.st_mtim.tv_sec, st.st_mtim.tv_nsec);
}

std::string utc_now() {
  std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Single quotes for /bin/sh: our cache paths never hold one, and a path
// that does is refused rather than quoted.
Result<std::string> shell_quoted(const fs::path& file) {
  if (file.string().find('\'') != std::string::npos)
    return Error{fmt::format("snapshot path {} holds a single quote", file.string())};
  return "'" + file.string() + "'";
}

}  // namespace

std::string snapshot_key(const std::vector<std::string>& qemu_argv, const fs::path& run_dir) {
  std::string text;
  const std::string dir = run_dir.string();
  for (size_t i = 0; i < qemu_argv.size(); ++i) {
    std::string a = qemu_argv[i];
    for (size_t p; !dir.empty() && (p = a.find(dir)) != std::string::npos;) a.replace(p, dir.size(), "@RUN@");
    text += a;
    text += '\n';
    if (i == 0) {
      auto qemu = base::find_program(a);
      text += file_identity(qemu ? qemu->string() : a);
    } else {
      text += file_identity(a);
    }
    text += '\n';
  }
  return content_hash(text);
}

std::string qemu_version(const std::string& qemu) {
  static std::mutex mutex;
  static std::map<std::string, std::string> known;
  std::lock_guard lock(mutex);
  auto it = known.find(qemu);
  if (it != known.end()) return it->second;
  auto r = run_process({qemu, "--version"}, 10s);
  std::string v = r && r->status == 0 ? r->output.substr(0, r->output.find('\n')) : "";
  known.emplace(qemu, v);
  return v;
}

SnapshotFiles snapshot_files(std::string_view key) {
  fs::path dir = cache_dir() / "snapshots" / std::string(key);
  return {dir, dir / "state", dir / "meta.json"};
}

Result<SnapshotMeta> read_snapshot_meta(const fs::path& path) {
  TRACEBED_ASSIGN_OR_RETURN(std::string text, read_text_file(path));
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return Error{fmt::format("{}: not a JSON object", path.string())};
  SnapshotMeta m;
  m.kernel = json.value("kernel", "");
  m.release = json.value("release", "");
  m.qemu_version = json.value("qemu_version", "");
  m.created = json.value("created", "");
  m.ncpus = json.value("ncpus", 0u);
  m.bytes = json.value("bytes", uint64_t{0});
  m.checksum = json.value("checksum", "");
  m.boot_seconds = json.value("boot_seconds", 0.0);
  m.save_seconds = json.value("save_seconds", 0.0);
  return m;
}

Status write_snapshot_meta(const fs::path& path, const SnapshotMeta& m) {
  nlohmann::json json = {{"kernel", m.kernel},
                         {"release", m.release},
                         {"qemu_version", m.qemu_version},
                         {"created", m.created.empty() ? utc_now() : m.created},
                         {"ncpus", m.ncpus},
                         {"bytes", m.bytes},
                         {"checksum", m.checksum},
                         {"boot_seconds", m.boot_seconds},
                         {"save_seconds", m.save_seconds}};
  return write_file_atomic(path, json.dump(2) + "\n");
}

Result<SnapshotMeta> find_snapshot(const SnapshotFiles& files) {
  std::error_code ec;
  if (!fs::is_regular_file(files.state, ec)) return Error{"no snapshot"};
  return read_snapshot_meta(files.meta);
}

Result<std::string> snapshot_checksum(const fs::path& state) {
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process({"cksum", state.string()}, 60s));
  auto fields = base::split_words(r.output);
  if (r.status != 0 || fields.size() < 2) return Error{fmt::format("cksum {} failed: {}", state.string(), r.output)};
  return fmt::format("{} {}", fields[0], fields[1]);
}

Status check_snapshot_state(const SnapshotFiles& files, const SnapshotMeta& meta) {
  if (meta.checksum.empty())
    return Error{fmt::format("{} has no checksum in {} (an older tracebed saved it)", files.state.string(),
                             files.meta.filename().string())};
  TRACEBED_ASSIGN_OR_RETURN(std::string now, snapshot_checksum(files.state));
  if (now != meta.checksum)
    return Error{fmt::format("{} has checksum {} (cksum), not the {} it was saved with", files.state.string(), now,
                             meta.checksum)};
  return {};
}

void discard_snapshot(const SnapshotFiles& files) {
  std::error_code ec;
  fs::remove(files.state, ec);
  fs::remove(files.meta, ec);
  fs::remove(files.dir, ec);  // only if nothing else is in it (a save under way)
}

void mark_snapshot_used(const SnapshotFiles& files) {
  std::error_code ec;
  fs::last_write_time(files.meta, fs::file_time_type::clock::now(), ec);
}

namespace {

// The complete snapshots of a kernel in the cache, with their meta.
std::vector<std::pair<SnapshotFiles, SnapshotMeta>> saved_of(const std::string& kernel) {
  std::vector<std::pair<SnapshotFiles, SnapshotMeta>> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(cache_dir() / "snapshots", ec)) {
    SnapshotFiles files = snapshot_files(entry.path().filename().string());
    auto meta = find_snapshot(files);
    if (meta && meta->kernel == kernel) out.emplace_back(files, *meta);
  }
  return out;
}

}  // namespace

void prune_snapshots(const std::string& kernel, size_t keep) {
  std::vector<std::pair<fs::file_time_type, SnapshotFiles>> found;
  for (auto& [files, meta] : saved_of(kernel)) {
    std::error_code ec;
    auto used = fs::last_write_time(files.meta, ec);
    if (!ec) found.emplace_back(used, files);
  }
  if (found.size() <= keep) return;
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (size_t i = keep; i < found.size(); ++i) discard_snapshot(found[i].second);
}

std::vector<SnapshotMeta> snapshots_of(const std::string& kernel) {
  std::vector<SnapshotMeta> out;
  for (auto& [files, meta] : saved_of(kernel)) out.push_back(meta);
  return out;
}

Result<std::string> migration_uri_to(const fs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(std::string quoted, shell_quoted(file));
  return "exec:cat > " + quoted;
}

Result<std::string> migration_uri_from(const fs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(std::string quoted, shell_quoted(file));
  return "exec:cat " + quoted;
}

}  // namespace tracebed::vm
