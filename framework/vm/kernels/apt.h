// Debian's archive through a private apt configuration inside the cache
// (<cache>/apt: sources.list, lists, downloaded archives): the system's apt
// setup is neither read nor changed. The suites are the catalogue's
// apt_sources (vmimages/kernels.json).
//
//   PrivateApt apt(catalogue.apt_sources());
//   auto rows = apt.madison({"linux-perf"});   // every version, with its suite
//   auto info = apt.show({"linux-perf=6.12.117-1"});
//
// The lists are fetched (apt-get update) only when sources.list changed or
// none are present; an unreachable archive is an Error saying so.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/lock_file.h"
#include "framework/base/result.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

// One row of `apt-cache madison`: "linux-perf | 6.12.117-1 | http://deb.debian.org/debian trixie/main amd64 Packages".
struct AptCandidate {
  std::string package;
  std::string version;
  std::string suite;  // "trixie", "bookworm-security", "experimental"
};

// The fields of one package stanza (`apt-cache show`) that fetching needs.
struct AptStanza {
  std::string package;
  std::string version;
  std::string architecture;
  std::string section;
  std::string sha256;
  // Pre-Depends and Depends: the first alternative of each, without its
  // version constraint; `perl:any`-style dependencies on interpreters are left out.
  std::vector<std::string> depends;
};

std::vector<AptCandidate> parse_madison(std::string_view text);
// Errors name the stanza (by its number and package) that lacks a field.
Result<std::vector<AptStanza>> parse_stanzas(std::string_view text);

// Where the dependencies of a package from `suite` come from, in tiers:
// the first tier that has a dependency gives its highest version there.
// A release and its -security/-updates suites are one tier (a point release
// may be newer than the last security upload); experimental's packages are
// built against sid's, so sid comes before experimental.
std::vector<std::vector<std::string>> dependency_suites(std::string_view suite);

class PrivateApt {
 public:
  explicit PrivateApt(std::vector<std::string> sources, std::filesystem::path dir = cache_dir() / "apt");

  // Writes sources.list; runs apt-get update when it changed or no lists exist.
  Status ensure_lists();
  Status update();

  Result<std::vector<AptCandidate>> madison(const std::vector<std::string>& packages);
  // `apt-cache show NAME=VERSION ...`.
  Result<std::vector<AptStanza>> show(const std::vector<std::string>& package_versions);
  // apt-get or apt-cache with the private options, output captured. Every
  // call holds the lists' lock (dir/.lock): processes sharing the cache
  // (ctest's suites, a kernel build) never run apt on them at once.
  Result<ProcessResult> run(const std::string& tool, const std::vector<std::string>& args,
                            std::chrono::seconds timeout, Output output = Output::capture,
                            const std::filesystem::path& cwd = {});

  const std::filesystem::path& dir() const { return dir_; }

 private:
  Result<base::LockFile> lock() const;
  Status update_unlocked();
  Result<ProcessResult> run_unlocked(const std::string& tool, const std::vector<std::string>& args,
                                     std::chrono::seconds timeout, Output output, const std::filesystem::path& cwd);
  std::vector<std::string> sources_;
  std::filesystem::path dir_;
};

}  // namespace tracebed::vm
