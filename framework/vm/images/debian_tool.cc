#include "framework/vm/images/debian_tool.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <set>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/vm/images/elf_libraries.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }

// dpkg's lib/dpkg/version.c: letters sort before non-letters, '~' before
// everything, even the end of the string.
int char_order(char c) {
  if (digit(c)) return 0;
  if (std::isalpha(static_cast<unsigned char>(c))) return c;
  if (c == '~') return -1;
  if (c) return c + 256;
  return 0;
}

int compare_part(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  auto at = [](std::string_view s, size_t k) { return k < s.size() ? s[k] : '\0'; };
  while (i < a.size() || j < b.size()) {
    while ((i < a.size() && !digit(a[i])) || (j < b.size() && !digit(b[j]))) {
      int ac = char_order(at(a, i)), bc = char_order(at(b, j));
      if (ac != bc) return ac - bc;
      ++i, ++j;
    }
    while (at(a, i) == '0') ++i;
    while (at(b, j) == '0') ++j;
    int first_diff = 0;
    while (digit(at(a, i)) && digit(at(b, j))) {
      if (!first_diff) first_diff = at(a, i) - at(b, j);
      ++i, ++j;
    }
    if (digit(at(a, i))) return 1;
    if (digit(at(b, j))) return -1;
    if (first_diff) return first_diff;
  }
  return 0;
}

struct SplitVersion {
  long epoch = 0;
  std::string_view upstream, revision;
};

SplitVersion split_version(std::string_view v) {
  SplitVersion s;
  if (auto colon = v.find(':'); colon != std::string_view::npos) {
    s.epoch = std::atol(std::string(v.substr(0, colon)).c_str());
    v.remove_prefix(colon + 1);
  }
  auto dash = v.rfind('-');
  s.upstream = v.substr(0, dash);
  if (dash != std::string_view::npos) s.revision = v.substr(dash + 1);
  return s;
}

std::string file_safe(std::string_view version) {
  std::string out(version);
  for (char& c : out)
    if (c == ':' || c == '/') c = '_';
  return out;
}

// Follows symlinks inside one unpacked package: an absolute target is
// relative to the package root, never the host's /.
std::optional<fs::path> resolve_in_tree(const fs::path& root, fs::path p) {
  std::error_code ec;
  for (int hops = 0; hops < 16; ++hops) {
    auto st = fs::symlink_status(p, ec);
    if (ec || !fs::exists(st)) return std::nullopt;
    if (!fs::is_symlink(st)) return fs::is_regular_file(st) ? std::optional(p) : std::nullopt;
    fs::path target = fs::read_symlink(p, ec);
    if (ec) return std::nullopt;
    p = (target.is_absolute() ? root / target.relative_path() : p.parent_path() / target).lexically_normal();
  }
  return std::nullopt;
}

// Where Debian puts shared libraries (before and after the /usr merge).
constexpr const char* kLibDirs[] = {"usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu", "usr/lib64", "lib64",
                                    "usr/lib", "lib"};

struct Unpacked {
  AptStanza stanza;
  std::string suite;
  fs::path dir;
  bool expanded = false;  // its Depends are unpacked too
};

class ToolTree {
 public:
  ToolTree(const Catalogue& catalogue, std::string who, fs::path root)
      : catalogue_(catalogue), apt_(catalogue.apt_sources()), who_(std::move(who)), root_(std::move(root)) {}

  // Downloads and unpacks `names`, each at its highest version in the first
  // tier of suites that has it (dependency_suites).
  Status add(const std::vector<std::string>& names, const std::vector<std::vector<std::string>>& tiers,
             std::string_view why) {
    TRACEBED_ASSIGN_OR_RETURN(auto rows, apt_.madison(names));
    std::vector<std::string> wanted;
    std::map<std::string, std::string> suite_of;
    for (const auto& name : names) {
      std::optional<AptCandidate> best;
      for (const auto& tier : tiers) {
        for (const auto& r : rows)
          if (r.package == name && std::find(tier.begin(), tier.end(), r.suite) != tier.end() &&
              (!best || compare_debian_versions(r.version, best->version) > 0))
            best = r;
        if (best) break;
      }
      if (!best) {
        std::vector<std::string> all;
        for (const auto& t : tiers) all.insert(all.end(), t.begin(), t.end());
        return Error{fmt::format("{}: {} ({}) is in none of the suites {} of the private apt lists", who_, name, why,
                                 fmt::join(all, ", "))};
      }
      wanted.push_back(name + "=" + best->version);
      suite_of[name] = best->suite;
    }
    TRACEBED_ASSIGN_OR_RETURN(auto stanzas, apt_.show(wanted));
    std::map<std::string, std::vector<AptStanza>> by_suite;
    for (auto& s : stanzas)
      if (!pkgs_.count(s.package) && suite_of.count(s.package)) by_suite[suite_of[s.package]].push_back(std::move(s));
    for (auto& [suite, list] : by_suite) {
      std::vector<DebPackage> debs;
      for (const auto& s : list) debs.push_back({s.package, s.version, s.sha256, s.architecture});
      TRACEBED_ASSIGN_OR_RETURN(auto files, fetch_debs(catalogue_, who_, suite, debs));
      for (size_t i = 0; i < list.size(); ++i) {
        fs::path dir = root_ / "pkgs" / list[i].package;
        std::error_code ec;
        fs::remove_all(dir, ec);
        fs::create_directories(dir, ec);
        TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process({"dpkg", "-x", files[i].string(), dir.string()}, 600s));
        if (r.status != 0) return Error{fmt::format("{}: dpkg -x {} failed: {}", who_, files[i].string(), r.output)};
        std::string name = list[i].package;
        pkgs_[name] = {std::move(list[i]), suite, dir};
      }
    }
    for (const auto& name : names)
      if (!pkgs_.count(name)) return Error{fmt::format("{}: apt-cache show gave no stanza for {}", who_, name)};
    return {};
  }

  // Unpacks the Depends of `names` that are not unpacked yet; false when there were none.
  Result<bool> expand(const std::set<std::string>& names) {
    std::map<std::string, std::vector<std::string>> by_suite;  // the dependant's suite -> dependencies
    std::set<std::string> queued;
    for (const auto& name : names) {
      auto& p = pkgs_.at(name);
      if (p.expanded) continue;
      p.expanded = true;
      for (const auto& d : p.stanza.depends)
        if (!pkgs_.count(d) && queued.insert(d).second) by_suite[p.suite].push_back(d);
    }
    for (const auto& [suite, deps] : by_suite)
      TRACEBED_TRY(add(deps, dependency_suites(suite), "a dependency"));
    return !queued.empty();
  }

  std::set<std::string> unexpanded() const {
    std::set<std::string> out;
    for (const auto& [name, p] : pkgs_)
      if (!p.expanded) out.insert(name);
    return out;
  }

  // usr/bin/BINARY or usr/bin/BINARY_<suffix> (bullseye's perf_5.10), an
  // ELF file; else bin/BINARY (dash before the /usr merge).
  std::optional<fs::path> find_binary(const std::string& binary) const {
    for (const char* dir : {"usr/bin", "bin"}) {
      for (const auto& [name, p] : pkgs_) {
        std::error_code ec;
        for (auto it = fs::directory_iterator(p.dir / dir, ec); !ec && it != fs::directory_iterator(); ++it) {
          std::string f = it->path().filename().string();
          if ((f == binary || f.starts_with(binary + "_")) && it->is_regular_file() && is_elf_file(it->path()))
            return it->path();
        }
      }
    }
    return std::nullopt;
  }

  std::optional<fs::path> find_library(const std::string& soname) const {
    for (const auto& [name, p] : pkgs_)
      for (const char* d : kLibDirs)
        if (auto f = resolve_in_tree(p.dir, p.dir / d / soname)) return f;
    return std::nullopt;
  }

  // The package whose unpacked tree holds `file`.
  std::optional<std::string> owner(const fs::path& file) const {
    for (const auto& [name, p] : pkgs_) {
      auto rel = file.lexically_relative(p.dir);
      if (!rel.empty() && *rel.begin() != "..") return name;
    }
    return std::nullopt;
  }

  std::vector<std::string> package_list() const {
    std::vector<std::string> out;
    for (const auto& [name, p] : pkgs_) out.push_back(fmt::format("{} {}", name, p.stanza.version));
    return out;
  }

 private:
  const Catalogue& catalogue_;
  PrivateApt apt_;
  std::string who_;
  fs::path root_;
  std::map<std::string, Unpacked> pkgs_;
};

nlohmann::json to_json(const DebianTool& t) {
  nlohmann::json libs = nlohmann::json::object();
  for (const auto& [soname, f] : t.libraries) libs[soname] = f.lexically_relative(t.root).string();
  return {{"package", t.package},
          {"package_version", t.package_version},
          {"suite", t.suite},
          {"version_output", t.version_output},
          {"binary", t.binary.lexically_relative(t.root).string()},
          {"interpreter", t.interpreter},
          {"libraries", libs},
          {"packages", t.packages}};
}

Result<DebianTool> from_json(const fs::path& root, const std::string& text) {
  auto j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded()) return Error{fmt::format("{}/tool.json: not valid JSON", root.string())};
  try {
    DebianTool t;
    t.root = root;
    t.package = j.at("package").get<std::string>();
    t.package_version = j.at("package_version").get<std::string>();
    t.suite = j.at("suite").get<std::string>();
    t.version_output = j.at("version_output").get<std::string>();
    t.binary = root / j.at("binary").get<std::string>();
    t.interpreter = j.at("interpreter").get<std::string>();
    for (const auto& [soname, f] : j.at("libraries").items()) t.libraries[soname] = root / f.get<std::string>();
    t.packages = j.at("packages").get<std::vector<std::string>>();
    return t;
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}/tool.json: {}", root.string(), e.what())};
  }
}

// The tree tool.json describes, when every file it names is still there
// (a cache cleaned by hand must not give an image build an Error); else the
// tree is fetched again.
std::optional<DebianTool> cached_tool(const fs::path& root) {
  auto text = base::read_file(root / "tool.json");
  if (!text) return std::nullopt;
  auto tool = from_json(root, *text);
  if (!tool) {
    progress(fmt::format("{}: fetching again", tool.error().message));
    return std::nullopt;
  }
  std::error_code ec;
  bool whole = fs::is_regular_file(tool->binary, ec);
  for (const auto& [soname, f] : tool->libraries) whole = whole && fs::is_regular_file(f, ec);
  if (!whole) {
    progress(fmt::format("{}: files named in tool.json are gone, fetching again", root.string()));
    return std::nullopt;
  }
  return std::move(tool).value();
}

// Unpacks the package and as much of its Depends closure as the binary's
// DT_NEEDED closure needs: a package's Depends are followed only while the
// binary is not found yet or one of its files needs a library not found yet.
Result<DebianTool> unpack(const Catalogue& catalogue, const DebianToolRequest& request, const AptCandidate& chosen,
                          const std::string& who, const fs::path& root) {
  ToolTree tree(catalogue, who, root);
  TRACEBED_TRY(tree.add({chosen.package}, {{chosen.suite}}, "the tool"));
  for (int round = 0;; ++round) {
    if (round > 20) return Error{fmt::format("{}: the dependencies do not settle after 20 rounds", who)};
    auto binary = tree.find_binary(request.binary);
    if (!binary) {
      TRACEBED_ASSIGN_OR_RETURN(bool more, tree.expand(tree.unexpanded()));
      if (!more)
        return Error{fmt::format("{}: no usr/bin/{} (or {}_*) in {} or its dependencies", who, request.binary,
                                 request.binary, chosen.package)};
      continue;
    }
    TRACEBED_ASSIGN_OR_RETURN(LibraryClosure closure,
                              library_closure(*binary, [&](const std::string& s) { return tree.find_library(s); }));
    if (closure.missing.empty()) {
      if (closure.interpreter.empty())
        return Error{fmt::format("{}: {} has no ELF interpreter (a static program needs no tree)", who,
                                 binary->string())};
      DebianTool t;
      t.package = chosen.package;
      t.package_version = chosen.version;
      t.suite = chosen.suite;
      t.root = root;
      t.binary = *binary;
      t.interpreter = closure.interpreter;
      t.libraries = closure.libraries;
      t.packages = tree.package_list();
      return t;
    }
    std::set<std::string> needers;
    for (const auto& [soname, needer] : closure.missing)
      if (auto o = tree.owner(needer)) needers.insert(*o);
    TRACEBED_ASSIGN_OR_RETURN(bool more, tree.expand(needers));
    if (!more) {
      std::vector<std::string> what;
      for (const auto& [soname, needer] : closure.missing)
        what.push_back(fmt::format("{} (needed by {})", soname, needer.filename().string()));
      return Error{fmt::format("{}: {} found in none of the packages their Depends name", who, fmt::join(what, ", "))};
    }
  }
}

}  // namespace

std::string DebianTool::describe() const { return fmt::format("{} {} ({})", package, package_version, suite); }

std::string DebianTool::guest_root() const {
  std::string v = package_version;
  for (char& c : v)
    if (c == ':' || c == '~') c = '_';
  return fmt::format("/opt/{}-{}", binary.filename().string().substr(0, binary.filename().string().find('_')), v);
}

std::optional<std::pair<int, int>> version_series(std::string_view v) {
  if (auto colon = v.find(':'); colon != std::string_view::npos && colon < v.find('.')) v.remove_prefix(colon + 1);
  size_t i = 0;
  auto number = [&]() -> std::optional<int> {
    size_t start = i;
    while (i < v.size() && digit(v[i]) && i - start < 6) ++i;
    if (i == start || (i < v.size() && digit(v[i]))) return std::nullopt;
    return std::atoi(std::string(v.substr(start, i - start)).c_str());
  };
  auto major = number();
  if (!major || i >= v.size() || v[i] != '.') return std::nullopt;
  ++i;
  auto minor = number();
  if (!minor) return std::nullopt;
  return std::pair{*major, *minor};
}

int compare_debian_versions(std::string_view a, std::string_view b) {
  auto x = split_version(a), y = split_version(b);
  if (x.epoch != y.epoch) return x.epoch < y.epoch ? -1 : 1;
  if (int c = compare_part(x.upstream, y.upstream)) return c < 0 ? -1 : 1;
  int c = compare_part(x.revision, y.revision);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

Result<AptCandidate> choose_for_kernel(const std::vector<AptCandidate>& candidates, std::string_view kernel_release) {
  auto kernel = version_series(kernel_release);
  if (!kernel) return Error{fmt::format("kernel release '{}' does not start with MAJOR.MINOR", kernel_release)};
  std::map<std::pair<int, int>, AptCandidate> best;  // series -> highest version
  for (const auto& c : candidates) {
    auto s = version_series(c.version);
    if (!s) continue;
    auto it = best.find(*s);
    if (it == best.end() || compare_debian_versions(c.version, it->second.version) > 0) best[*s] = c;
  }
  if (best.empty()) return Error{"no candidate version with a MAJOR.MINOR series"};
  if (auto it = best.find(*kernel); it != best.end()) return it->second;
  if (auto it = best.upper_bound(*kernel); it != best.end()) return it->second;
  return best.rbegin()->second;
}

namespace {

// "bookworm-security", "bookworm-backports" -> "bookworm".
std::string_view release_of(std::string_view suite) { return suite.substr(0, suite.find('-')); }

}  // namespace

Result<AptCandidate> choose_from_kernels_release(const std::vector<AptCandidate>& candidates,
                                                 const std::vector<AptCandidate>& kernel_packages,
                                                 std::string_view kernel_release) {
  auto kernel = version_series(kernel_release);
  const bool follows_kernel = kernel && std::any_of(candidates.begin(), candidates.end(), [&](const AptCandidate& c) {
                                return version_series(c.version) == kernel;
                              });
  if (follows_kernel) return choose_for_kernel(candidates, kernel_release);
  auto shipped = choose_for_kernel(kernel_packages, kernel_release);
  if (shipped) {
    const AptCandidate* best = nullptr;
    for (const auto& c : candidates) {
      if (release_of(c.suite) != release_of(shipped->suite)) continue;
      if (!best || compare_debian_versions(c.version, best->version) > 0) best = &c;
    }
    if (best) return *best;
  }
  return choose_for_kernel(candidates, kernel_release);
}

Result<DebianTool> fetch_debian_tool(const Catalogue& catalogue, const DebianToolRequest& request,
                                     std::string_view kernel_release) {
  std::string who = fmt::format("{} for kernel {}", request.package, kernel_release);
  PrivateApt apt(catalogue.apt_sources());
  TRACEBED_ASSIGN_OR_RETURN(auto candidates, apt.madison({request.package}));
  if (candidates.empty())
    return Error{fmt::format("{}: the private apt lists ({}) have no {}", who, apt.dir().string(), request.package)};
  // Which Debian release ships which kernel series: its linux-libc-dev.
  TRACEBED_ASSIGN_OR_RETURN(auto kernel_packages, apt.madison({"linux-libc-dev"}));
  auto choice = choose_from_kernels_release(candidates, kernel_packages, kernel_release);
  if (!choice) return choice.error().within(who);
  AptCandidate chosen = *choice;
  fs::path root = cache_dir() / "tools" / fmt::format("{}_{}", chosen.package, file_safe(chosen.version));
  if (auto tool = cached_tool(root)) return *tool;

  // Two suite binaries may fetch at once: one unpacks, the other waits and finds it done.
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock, base::LockFile::acquire(root.parent_path() / ".lock"));
  std::error_code ec;
  if (auto tool = cached_tool(root)) return *tool;

  progress(fmt::format("{}: {} {} from {}", who, chosen.package, chosen.version, chosen.suite));
  fs::remove_all(root, ec);
  TRACEBED_ASSIGN_OR_RETURN(DebianTool tool, unpack(catalogue, request, chosen, who, root));
  // The tool must start here before it is trusted in a guest: a library it
  // loads that DT_NEEDED does not show fails now, with the loader's words.
  fs::path lib = root / "lib";
  fs::create_directories(lib, ec);
  for (const auto& [soname, f] : tool.libraries) {
    fs::create_symlink(fs::relative(f, lib), lib / soname, ec);
    if (ec) return Error{fmt::format("{}: {}: {}", who, (lib / soname).string(), ec.message())};
  }
  TRACEBED_ASSIGN_OR_RETURN(
      ProcessResult r,
      run_process({(lib / tool.interpreter).string(), "--library-path", lib.string(), tool.binary.string(), "--version"},
                  60s));
  // A program without --version (dash) exits with a status of its own
  // choosing; the loader's failure is 127 and a crash 128 + signal.
  if (!started_through_loader(r.status))
    return Error{fmt::format("{}: {} --version through its own loader failed (status {}): {}", who,
                             tool.binary.filename().string(), r.status, r.output)};
  tool.version_output = r.status == 0 ? r.output.substr(0, r.output.find('\n')) : "";
  TRACEBED_TRY(write_file_atomic(root / "tool.json", to_json(tool).dump(2) + "\n"));
  progress(fmt::format("{}: ready, {} ({} libraries from {} packages)", who, tool.describe(),
                       tool.libraries.size(), tool.packages.size()));
  return tool;
}

bool started_through_loader(int status) { return status >= 0 && status < 126; }

std::vector<Payload> guest_payloads(const DebianTool& tool) {
  std::string root = tool.guest_root();
  std::vector<Payload> out;
  out.push_back({tool.binary, root + "/bin/" + tool.binary.filename().string(), 0755});
  for (const auto& [soname, f] : tool.libraries) out.push_back({f, root + "/lib/" + soname, 0755});
  return out;
}

std::vector<std::string> guest_command(const DebianTool& tool) {
  std::string root = tool.guest_root();
  return {root + "/lib/" + tool.interpreter, "--library-path", root + "/lib",
          root + "/bin/" + tool.binary.filename().string()};
}

}  // namespace tracebed::vm
