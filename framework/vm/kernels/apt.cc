#include "framework/vm/kernels/apt.h"

#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/base/text.h"


namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// "libc6 (>= 2.38), libfoo1 | libfoo1t64, perl:any" -> libc6, libfoo1 (deb-control(5) relationship fields).
void add_depends(std::string_view field, std::vector<std::string>& out) {
  for (std::string_view rel : base::split(field, ',')) {
    std::string_view first = base::split(rel, '|').front();
    first = base::trim(first.substr(0, first.find('(')));
    if (first.empty() || first.ends_with(":any")) continue;
    out.emplace_back(first.substr(0, first.find(':')));  // libfoo:amd64
  }
}

bool have_package_lists(const fs::path& lists) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(lists, ec); !ec && it != fs::directory_iterator(); ++it)
    // apt stores lists compressed (…_Packages.lz4) where it can.
    if (it->path().filename().string().find("_Packages") != std::string::npos) return true;
  return false;
}

// apt's warnings and errors ("W: Failed to fetch …: Could not connect …"), for an error message.
std::string apt_complaints(const std::string& output) {
  std::string out;
  for (std::string_view line : base::split_lines(output))
    if ((line.starts_with("W: ") || line.starts_with("E: ") || line.starts_with("Err:")) && out.size() < 800)
      out += fmt::format("\n  {}", line);
  return out;
}

}  // namespace

std::vector<AptCandidate> parse_madison(std::string_view text) {
  std::vector<AptCandidate> out;
  for (std::string_view line : base::split_lines(text)) {
    auto cols = base::split(line, '|', {.trim = true});
    if (cols.size() != 3 || cols[0].empty() || cols[1].empty()) continue;
    // "http://deb.debian.org/debian trixie/main amd64 Packages": the suite is the word before "/component".
    auto words = base::split_words(cols[2]);
    if (words.size() < 2 || words.back() != "Packages") continue;  // "Sources" rows
    std::string_view dist = words[1];
    out.push_back({std::string(cols[0]), std::string(cols[1]), std::string(dist.substr(0, dist.find('/')))});
  }
  return out;
}

Result<std::vector<AptStanza>> parse_stanzas(std::string_view text) {
  std::vector<AptStanza> out;
  AptStanza cur;
  bool any = false;
  auto finish = [&]() -> Status {
    if (!any) return {};
    if (cur.package.empty() || cur.version.empty() || cur.sha256.empty() || cur.architecture.empty())
      return Error{fmt::format("apt-cache show: stanza {} ({}) lacks Package, Version, Architecture or SHA256",
                               out.size() + 1, cur.package.empty() ? "no name" : cur.package)};
    out.push_back(std::move(cur));
    cur = {};
    any = false;
    return {};
  };
  for (std::string_view line : base::split_lines(text)) {
    if (base::trim(line).empty()) {
      TRACEBED_TRY(finish());
      continue;
    }
    if (line.front() == ' ' || line.front() == '\t') continue;  // continuation (Description)
    size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    std::string_view key = line.substr(0, colon);
    std::string value(base::trim(line.substr(colon + 1)));
    // Only the stanza's own fields start one: a stray "N: Unable to locate package" line does not.
    bool field = key == "Package" || key == "Version" || key == "Architecture" || key == "Section" ||
                 key == "SHA256" || key == "Depends" || key == "Pre-Depends";
    if (!field) continue;
    any = true;
    if (key == "Package") cur.package = value;
    else if (key == "Version") cur.version = value;
    else if (key == "Architecture") cur.architecture = value;
    else if (key == "Section") cur.section = value;
    else if (key == "SHA256") cur.sha256 = value;
    else if (key == "Depends" || key == "Pre-Depends") add_depends(value, cur.depends);
  }
  TRACEBED_TRY(finish());
  return out;
}

std::vector<std::vector<std::string>> dependency_suites(std::string_view suite) {
  if (suite == "experimental") return {{"sid"}, {"experimental"}};
  for (std::string_view tail : {"-security", "-updates", "-backports"})
    if (suite.ends_with(tail)) return {{std::string(suite), std::string(suite.substr(0, suite.size() - tail.size()))}};
  return {{std::string(suite)}};
}

PrivateApt::PrivateApt(std::vector<std::string> sources, fs::path dir) : sources_(std::move(sources)), dir_(std::move(dir)) {}

Result<base::LockFile> PrivateApt::lock() const { return base::LockFile::acquire(dir_ / ".lock"); }

Result<ProcessResult> PrivateApt::run(const std::string& tool, const std::vector<std::string>& args,
                                      std::chrono::seconds timeout, Output output, const fs::path& cwd) {
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile held, lock());
  return run_unlocked(tool, args, timeout, output, cwd);
}

Result<ProcessResult> PrivateApt::run_unlocked(const std::string& tool, const std::vector<std::string>& args,
                                               std::chrono::seconds timeout, Output output, const fs::path& cwd) {
  std::vector<std::string> argv = {tool,
                                   "-o", "Dir::Etc::SourceList=" + (dir_ / "sources.list").string(),
                                   "-o", "Dir::Etc::SourceParts=/dev/null",
                                   "-o", "Dir::State::Lists=" + (dir_ / "lists").string(),
                                   "-o", "Dir::Cache=" + (dir_ / "cache").string(),
                                   "-o", "Debug::NoLocking=1",
                                   "-o", "APT::Sandbox::User=root",
                                   "-q"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_process(argv, timeout, output, cwd);
}

Status PrivateApt::update() {
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile held, lock());
  return update_unlocked();
}

Status PrivateApt::update_unlocked() {
  progress("updating the private apt lists (Debian suites named in the catalogue)");
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_unlocked("apt-get", {"update"}, 600s, Output::tee, {}));
  // apt-get update exits 0 when lists cannot be fetched ("W: Failed to
  // fetch"); the lists it kept from before are still usable.
  if (r.status != 0 || !have_package_lists(dir_ / "lists"))
    return Error{fmt::format("apt-get update with the private sources in {} got no package lists (status {}); is the "
                             "Debian archive reachable?{}",
                             dir_.string(), r.status, apt_complaints(r.output))};
  if (r.output.find("Failed to fetch") != std::string::npos)
    progress("apt-get update could not fetch every list (is the archive reachable?); using those cached before");
  return {};
}

Status PrivateApt::ensure_lists() {
  std::error_code ec;
  fs::create_directories(dir_ / "lists" / "partial", ec);
  fs::create_directories(dir_ / "cache" / "archives" / "partial", ec);
  std::string sources;
  for (const auto& s : sources_) sources += s + "\n";
  // Two processes that find no lists take turns: the second finds the
  // first's (two updates at once rename each other's partial files away).
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile held, lock());
  bool changed = false;
  auto old = base::read_file(dir_ / "sources.list");
  if (!old || *old != sources) {
    TRACEBED_TRY(write_file_atomic(dir_ / "sources.list", sources));
    changed = true;
  }
  bool have_lists = have_package_lists(dir_ / "lists");
  if (changed || !have_lists) TRACEBED_TRY(update_unlocked());
  return {};
}

Result<std::vector<AptCandidate>> PrivateApt::madison(const std::vector<std::string>& packages) {
  TRACEBED_TRY(ensure_lists());
  std::vector<std::string> args = {"madison"};
  args.insert(args.end(), packages.begin(), packages.end());
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run("apt-cache", args, 120s));
  if (r.status != 0) return Error{fmt::format("apt-cache madison {}: status {}: {}", packages.front(), r.status, r.output)};
  return parse_madison(r.output);
}

Result<std::vector<AptStanza>> PrivateApt::show(const std::vector<std::string>& package_versions) {
  TRACEBED_TRY(ensure_lists());
  std::vector<std::string> args = {"show", "--no-all-versions"};
  args.insert(args.end(), package_versions.begin(), package_versions.end());
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run("apt-cache", args, 120s));
  if (r.status != 0) return Error{fmt::format("apt-cache show {}: status {}: {}", package_versions.front(), r.status, r.output)};
  return parse_stanzas(r.output);
}

}  // namespace tracebed::vm
