#include "framework/vm/kernels/gcov_build.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework/base/files.h"
#include "framework/base/text.h"

namespace tracebed::vm {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kBuildFile = "build.txt";  // "objtree DIR" and a "path P" line per path

// Every regular file under `dir` whose extension is one of `exts`.
Result<std::vector<fs::path>> files_under(const fs::path& dir, const std::vector<std::string>& exts) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file()) continue;
    if (std::find(exts.begin(), exts.end(), it->path().extension().string()) != exts.end()) out.push_back(it->path());
  }
  if (ec) return Error{fmt::format("{}: {}", dir.string(), ec.message())};
  std::sort(out.begin(), out.end());
  return out;
}

// Copies the files of `exts` under from/path to to/path, keeping their place.
Result<size_t> copy_under(const fs::path& from, const fs::path& to, const std::string& path,
                          const std::vector<std::string>& exts) {
  TRACEBED_ASSIGN_OR_RETURN(std::vector<fs::path> files, files_under(from / path, exts));
  for (const auto& f : files) {
    fs::path dest = to / fs::relative(f, from);
    std::error_code ec;
    fs::create_directories(dest.parent_path(), ec);
    if (ec) return Error{fmt::format("{}: {}", dest.parent_path().string(), ec.message())};
    TRACEBED_TRY(base::copy_file(f, dest));
  }
  return files.size();
}

}  // namespace

Result<std::vector<std::string>> parse_gcov_paths(std::string_view list) {
  std::vector<std::string> out;
  for (std::string_view part : base::split(list, ',')) {
    std::string_view p = base::trim(part);
    if (p.empty()) continue;
    bool bad = p.front() == '/' || p.back() == '/' || p == "." || p.find("..") != std::string_view::npos;
    if (bad)
      return Error{fmt::format("--gcov-paths: {}: name a directory relative to the tree's top, such as kernel/trace",
                               p)};
    if (std::find(out.begin(), out.end(), p) == out.end()) out.emplace_back(p);
  }
  if (out.empty()) return Error{"--gcov-paths names no directory (for example kernel/trace,kernel/bpf)"};
  return out;
}

Result<std::vector<std::string>> gcov_make_variables(const fs::path& src, const std::vector<std::string>& paths) {
  std::set<std::string> vars;
  for (const auto& path : paths) {
    std::error_code ec;
    if (!fs::is_directory(src / path, ec))
      return Error{fmt::format("--gcov-paths: {} is no directory of {}", path, src.string())};
    TRACEBED_ASSIGN_OR_RETURN(std::vector<fs::path> sources, files_under(src / path, {".c"}));
    if (sources.empty()) return Error{fmt::format("--gcov-paths: {}/{} holds no C file", src.string(), path)};
    for (const auto& c : sources) vars.insert(fmt::format("GCOV_PROFILE_{}.o=y", c.stem().string()));
  }
  return std::vector<std::string>(vars.begin(), vars.end());
}

Status stage_gcov_files(const fs::path& src, const fs::path& objtree, const std::vector<std::string>& paths,
                        const fs::path& dest) {
  std::string build = fmt::format("objtree {}\nsrctree {}\n", fs::absolute(objtree).lexically_normal().string(),
                                  fs::absolute(src).lexically_normal().string());
  size_t notes = 0;
  for (const auto& path : paths) {
    TRACEBED_ASSIGN_OR_RETURN(size_t n, copy_under(objtree, dest / "obj", path, {".gcno"}));
    TRACEBED_TRY(copy_under(src, dest / "src", path, {".c", ".h"}));
    notes += n;
    build += fmt::format("path {}\n", path);
  }
  // A build that profiled nothing would report 0 % without a word.
  if (notes == 0)
    return Error{fmt::format("the gcov build left no .gcno file under {} of {}: nothing was profiled",
                             fmt::join(paths, ", "), objtree.string())};
  return base::write_file_atomic(dest / kBuildFile, build);
}

Result<GcovFiles> read_gcov_files(const fs::path& kernel_dir) {
  GcovFiles g;
  g.root = kernel_dir / "gcov";
  auto text = base::read_file(g.root / kBuildFile);
  if (!text)
    return Error{fmt::format("{} was not built with --gcov (no {}): build it with `tracebed kernels build ... --gcov`",
                             kernel_dir.string(), (g.root / kBuildFile).string())};
  for (std::string_view line : base::split_lines(*text)) {
    if (line.starts_with("objtree ")) g.objtree = std::string(line.substr(8));
    else if (line.starts_with("srctree ")) g.srctree = std::string(line.substr(8));
    else if (line.starts_with("path ")) g.paths.emplace_back(line.substr(5));
  }
  if (g.objtree.empty() || g.srctree.empty() || g.paths.empty())
    return Error{fmt::format("{}: no objtree, srctree or path line", (g.root / kBuildFile).string())};
  return g;
}

}  // namespace tracebed::vm
