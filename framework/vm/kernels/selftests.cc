#include "framework/vm/kernels/selftests.h"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <regex>

#include <fmt/format.h>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// MAJOR * 1000 + MINOR, or -1.
int series_number(std::string_view series) {
  auto dot = series.find('.');
  if (series.empty() || dot == std::string_view::npos) return -1;
  return std::atoi(std::string(series.substr(0, dot)).c_str()) * 1000 +
         std::atoi(std::string(series.substr(dot + 1)).c_str());
}

// Directory name of one package's tree: the sha256 keys it, the rest is for people.
fs::path tree_dir(const DebPackage& pkg) {
  std::string version = pkg.version;
  std::replace(version.begin(), version.end(), ':', '%');
  return cache_dir() / "selftests" / fmt::format("{}_{}_{}", pkg.name, version, pkg.sha256.substr(0, 16));
}

Status unpack(const fs::path& deb, const fs::path& into) {
  // Only the selftests the suite runs, the kselftest harness and the uapi
  // header the user_events selftests include: a few MB of a 150 MB tarball.
  std::string script = fmt::format(
      "set -o pipefail; dpkg-deb --fsys-tarfile '{}' | tar -xO --wildcards './usr/src/linux-source-*.tar.*' | "
      "xz -dc | tar -x -C '{}' --strip-components=1 --wildcards "
      "'*/tools/testing/selftests/ftrace/*' '*/tools/testing/selftests/user_events/*' "
      "'*/tools/testing/selftests/kselftest*' '*/include/uapi/linux/user_events.h'",
      deb.string(), into.string());
  auto r = base::run_process({"bash", "-c", script}, 900s);
  if (!r) return r.error();
  // tar exits 2 when a pattern matched nothing (5.10 has no user_events): fine
  // as long as ftrace's selftests are there.
  if (!fs::exists(into / "tools/testing/selftests/ftrace/ftracetest"))
    return Error{fmt::format("unpacking the selftests of {} failed (status {}): {}", deb.string(), r->status,
                             r->output.substr(0, 2000))};
  return {};
}

}  // namespace

std::string kernel_series(std::string_view version) {
  static const std::regex kSeries(R"(^(\d+)\.(\d+))");
  std::match_results<std::string_view::const_iterator> m;
  if (!std::regex_search(version.begin(), version.end(), m, kSeries)) return "";
  return m[1].str() + "." + m[2].str();
}

Result<SelftestSource> selftest_source(const Catalogue& catalogue, const KernelSpec& spec, std::string_view release) {
  if (spec.selftests) return SelftestSource{*spec.selftests, spec.selftests_suite, ""};
  std::string series = kernel_series(release);
  int want = series_number(series);
  const KernelSpec* best = nullptr;
  int best_distance = 0;
  for (const auto& [name, k] : catalogue.kernels()) {
    if (!k.selftests) continue;
    int have = series_number(kernel_series(k.selftests->version));
    if (have < 0) continue;
    int distance = want < 0 ? -have : std::abs(have - want);  // unknown series: the newest
    if (!best || distance < best_distance) {
      best = &k;
      best_distance = distance;
    }
  }
  if (!best)
    return Error{fmt::format("no linux-source package pinned in the catalogue for the selftests of {}", spec.name)};
  std::string have = kernel_series(best->selftests->version);
  std::string note;
  if (have != series)
    note = fmt::format("no linux-source pinned for {} (release {}): {} {}, the nearest series", spec.name,
                       release.empty() ? "unknown" : std::string(release), best->selftests->name,
                       best->selftests->version);
  return SelftestSource{*best->selftests, best->selftests_suite, note};
}

Result<Selftests> fetch_selftests(const Catalogue& catalogue, const SelftestSource& source) {
  Selftests st{source, tree_dir(source.package)};
  if (fs::exists(st.root / ".complete")) return st;
  TRACEBED_ASSIGN_OR_RETURN(fs::path deb, fetch_deb(catalogue, "selftests", source.suite, source.package));
  std::error_code ec;
  fs::create_directories(st.root.parent_path(), ec);
  fs::path tmp = st.root.parent_path() / fmt::format(".{}.{}", st.root.filename().string(), getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (Status s = unpack(deb, tmp); !s) {
    fs::remove_all(tmp, ec);
    return s.error();
  }
  TRACEBED_TRY(base::write_file_atomic(tmp / ".complete", source.package.name + "=" + source.package.version + "\n"));
  fs::rename(tmp, st.root, ec);
  if (ec) {  // another process won the race: use its tree
    fs::remove_all(tmp, ec);
    if (!fs::exists(st.root / ".complete"))
      return Error{fmt::format("{}: cannot put the selftests there", st.root.string())};
  }
  return st;
}

Result<std::vector<std::string>> ftracetest_cases(const Selftests& selftests) {
  fs::path testd = selftests.ftrace() / "test.d";
  if (!fs::is_directory(testd)) return Error{fmt::format("{}: no such directory", testd.string())};
  std::vector<std::string> cases;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(testd, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    if (it->is_regular_file() && it->path().extension() == ".tc")
      cases.push_back(fs::relative(it->path(), testd).string());
  if (ec) return Error{fmt::format("listing {}: {}", testd.string(), ec.message())};
  std::sort(cases.begin(), cases.end());
  return cases;
}

Result<fs::path> build_user_events(const Selftests& selftests) {
  fs::path src = selftests.user_events();
  if (!fs::is_directory(src))
    return Error{fmt::format("{} {} has no user_events selftests", selftests.source.package.name,
                             selftests.source.package.version)};
  fs::path out = selftests.root / "user_events-bin";
  if (fs::exists(out / ".complete")) return out;
  // The tree's own uapi header, alone: the rest of linux/ stays the host's.
  fs::path include = selftests.root / "user_events-include";
  std::error_code ec;
  fs::create_directories(include / "linux", ec);
  fs::copy_file(selftests.root / "include/uapi/linux/user_events.h", include / "linux/user_events.h",
                fs::copy_options::overwrite_existing, ec);
  if (ec)
    return Error{fmt::format("{}: no include/uapi/linux/user_events.h: {}", selftests.root.string(), ec.message())};
  fs::path tmp = selftests.root / fmt::format(".user_events-bin.{}", getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  for (const auto& e : fs::directory_iterator(src, ec)) {
    if (e.path().extension() != ".c") continue;
    std::string name = e.path().stem().string();
    auto r = base::run_process(
        {"cc", "-static", "-O1", "-Wall", "-I", include.string(), "-I", selftests.selftests().string(), "-o",
         (tmp / name).string(), e.path().string(), "-lrt", "-lpthread", "-lm"},
        300s);
    if (!r) return r.error();
    if (r->status != 0)
      return Error{fmt::format("building {} failed: {}", e.path().string(), r->output.substr(0, 3000))};
  }
  TRACEBED_TRY(base::write_file_atomic(tmp / ".complete", "\n"));
  fs::remove_all(out, ec);
  fs::rename(tmp, out, ec);
  if (ec && !fs::exists(out / ".complete")) return Error{fmt::format("{}: {}", out.string(), ec.message())};
  return out;
}

Result<fs::path> build_ftrace_helpers(const Selftests& selftests) {
  fs::path out = selftests.root / "ftrace-bin";
  if (fs::exists(out / ".complete")) return out;
  std::error_code ec;
  fs::path tmp = selftests.root / fmt::format(".ftrace-bin.{}", getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  fs::path poll = selftests.ftrace() / "poll.c";
  if (fs::exists(poll)) {
    auto r = base::run_process({"cc", "-static", "-O1", "-Wall", "-o", (tmp / "poll").string(), poll.string()}, 300s);
    if (!r) return r.error();
    if (r->status != 0) return Error{fmt::format("building {} failed: {}", poll.string(), r->output.substr(0, 3000))};
  }
  TRACEBED_TRY(base::write_file_atomic(tmp / ".complete", "\n"));
  fs::remove_all(out, ec);
  fs::rename(tmp, out, ec);
  if (ec && !fs::exists(out / ".complete")) return Error{fmt::format("{}: {}", out.string(), ec.message())};
  return out;
}

}  // namespace tracebed::vm
