#include "framework/coverage/gcov_report.h"

#include <algorithm>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "framework/base/files.h"
#include "framework/base/process.h"
#include "framework/base/text.h"

namespace tracebed::coverage {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// lcov 1.16 counts branches only when asked.
const std::vector<std::string> kBranches = {"--rc", "lcov_branch_coverage=1"};

Status run_lcov(std::vector<std::string> argv, std::string_view what) {
  argv.insert(argv.begin() + 1, kBranches.begin(), kBranches.end());
  auto r = base::run_process(argv, 1800s);
  if (!r) return Error{fmt::format("{}: {} (install lcov: ci/install-deps.sh)", what, r.error().message)};
  if (r->status != 0) {
    std::string tail = r->output.size() > 2000 ? r->output.substr(r->output.size() - 2000) : r->output;
    return Error{fmt::format("{}: {} exited with {}:\n{}", what, argv[0], r->status, tail)};
  }
  return {};
}

// `lcov --add-tracefile` of each of `infos` into `out`.
Status add_up(const std::vector<fs::path>& infos, const fs::path& out, std::string_view what) {
  std::vector<std::string> argv = {"lcov", "--quiet", "--output-file", out.string()};
  for (const auto& info : infos) argv.insert(argv.end(), {"--add-tracefile", info.string()});
  return run_lcov(argv, what);
}

bool under_paths(std::string_view rel, const std::vector<std::string>& paths) {
  return std::any_of(paths.begin(), paths.end(),
                     [&](const std::string& p) { return rel.starts_with(p + "/"); });
}

// A boot's counts beside their .gcno files, as gcov reads them; the objects
// outside the profiled paths (a namesake profiled by the stem) are left out.
Result<size_t> lay_out_counts(const ProfiledBuild& build, const fs::path& boot, const fs::path& dir) {
  // The guest names a count by its object's absolute path below gcov/.
  fs::path objtree = boot / fs::path(build.objtree).relative_path();
  size_t n = 0;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(objtree, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".gcda") continue;
    std::string rel = fs::relative(it->path(), objtree).string();
    if (!under_paths(rel, build.paths)) continue;
    fs::path notes = build.objects / fs::path(rel).replace_extension(".gcno");
    if (!fs::exists(notes)) return Error{fmt::format("{}: no {} beside it in the build", it->path().string(), notes.string())};
    fs::create_directories((dir / rel).parent_path(), ec);
    if (ec) return Error{fmt::format("{}: {}", (dir / rel).parent_path().string(), ec.message())};
    TRACEBED_TRY(base::copy_file(it->path(), dir / rel));
    fs::create_symlink(notes, dir / fs::path(rel).replace_extension(".gcno"), ec);
    if (ec) return Error{fmt::format("{}: {}", (dir / rel).string(), ec.message())};
    ++n;
  }
  if (ec) return Error{fmt::format("{}: {}", objtree.string(), ec.message())};
  return n;
}

// gcov names a source by the path it was compiled from: the build's source
// tree (or object tree). The report shows the copies kept with the kernel.
Status point_at_kept_sources(const fs::path& info, const ProfiledBuild& build) {
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(info));
  std::string out;
  out.reserve(text.size());
  const std::string kept = build.sources.string() + "/";
  for (std::string_view line : base::split_lines(text)) {
    if (line.starts_with("SF:")) {
      std::string_view path = line.substr(3);
      for (const std::string& tree : {build.srctree, build.objtree})
        if (path.starts_with(tree + "/")) {
          out += "SF:" + kept + std::string(path.substr(tree.size() + 1)) + "\n";
          path = {};
          break;
        }
      if (!path.empty()) out += std::string(line) + "\n";
      continue;
    }
    out += std::string(line) + "\n";
  }
  return base::write_file_atomic(info, out);
}

std::vector<std::string> extract_patterns(const ProfiledBuild& build) {
  std::vector<std::string> out;
  for (const auto& p : build.paths) out.push_back((build.sources / p).string() + "/*");
  return out;
}

// One suite's tracefile from its boots' counts, or an empty path when none came back.
Result<fs::path> capture_suite(const ProfiledBuild& build, const fs::path& suite_counts, const fs::path& work,
                               const fs::path& info) {
  std::vector<fs::path> boots;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(suite_counts, ec))
    if (e.is_directory() && e.path().filename().string().starts_with("boot-")) boots.push_back(e.path());
  std::sort(boots.begin(), boots.end());
  std::vector<fs::path> captures;
  for (const auto& boot : boots) {
    fs::path dir = work / boot.filename();
    fs::remove_all(dir, ec);
    TRACEBED_ASSIGN_OR_RETURN(size_t n, lay_out_counts(build, boot, dir));
    if (n == 0) continue;
    fs::path captured = dir.string() + ".info";
    TRACEBED_TRY(run_lcov({"lcov", "--quiet", "--capture", "--directory", dir.string(), "--base-directory",
                           build.srctree, "--output-file", captured.string()},
                          fmt::format("reading the counts of {}", boot.string())));
    TRACEBED_TRY(point_at_kept_sources(captured, build));
    std::vector<std::string> extract = {"lcov", "--quiet", "--extract", captured.string()};
    for (auto& p : extract_patterns(build)) extract.push_back(p);
    extract.insert(extract.end(), {"--output-file", captured.string()});
    TRACEBED_TRY(run_lcov(extract, fmt::format("keeping {} of {}", fmt::join(build.paths, ", "), captured.string())));
    captures.push_back(captured);
  }
  if (captures.empty()) return fs::path();
  TRACEBED_TRY(add_up(captures, info, fmt::format("adding up the boots of {}", suite_counts.string())));
  return info;
}

std::vector<std::string> read_missing(const fs::path& suite_counts) {
  std::vector<std::string> out;
  auto text = base::read_file(suite_counts / "missing.txt");
  if (!text) return out;
  for (std::string_view line : base::split_lines(*text))
    if (!base::trim(line).empty()) out.emplace_back(base::trim(line));
  return out;
}

std::string render(const GcovReport& r, const ProfiledBuild& build) {
  std::string md = fmt::format("# Kernel coverage of {}\n\n", fmt::join(build.paths, ", "));
  md += "Every suite together (lcov's tracefile: total.info; HTML: html/index.html).\n\n";
  md += summary_table(r.files, build.sources.string() + "/");
  md += "\n## By suite\n\n| suite | lines | % | functions | % | branches | % | counts missing |\n"
        "|---|---:|---:|---:|---:|---:|---:|---|\n";
  for (const auto& s : r.suites) {
    const FileSummary& t = s.total;
    md += fmt::format("| {} | {}/{} | {} | {}/{} | {} | {}/{} | {} | {} |\n", s.suite, t.lines_hit, t.lines,
                      percent(t.lines_hit, t.lines), t.functions_hit, t.functions,
                      percent(t.functions_hit, t.functions), t.branches_hit, t.branches,
                      percent(t.branches_hit, t.branches),
                      s.missing.empty() ? "" : fmt::format("{}", fmt::join(s.missing, "; ")));
  }
  return md;
}

nlohmann::json to_json(const FileSummary& f, std::string_view strip) {
  std::string_view name = f.file;
  if (name.starts_with(strip)) name.remove_prefix(strip.size());
  return {{"file", name},           {"lines", f.lines},         {"lines_hit", f.lines_hit},
          {"functions", f.functions}, {"functions_hit", f.functions_hit}, {"branches", f.branches},
          {"branches_hit", f.branches_hit}};
}

// The same as the Markdown, for programs.
std::string render_json(const GcovReport& r, const ProfiledBuild& build) {
  nlohmann::json j;
  j["paths"] = build.paths;
  const std::string strip = build.sources.string() + "/";
  j["files"] = nlohmann::json::array();
  for (const auto& f : r.files)
    if (f.file != "total") j["files"].push_back(to_json(f, strip));
  j["total"] = to_json(r.files.back(), strip);
  j["total"].erase("file");
  j["suites"] = nlohmann::json::array();
  for (const auto& s : r.suites) {
    nlohmann::json row = to_json(s.total, "");
    row.erase("file");
    row["suite"] = s.suite;
    row["missing"] = s.missing;
    j["suites"].push_back(row);
  }
  return j.dump(1) + "\n";
}

}  // namespace

Result<GcovReport> write_gcov_report(const ProfiledBuild& build, const fs::path& counts, const fs::path& out) {
  GcovReport r;
  std::error_code ec;
  fs::remove_all(out, ec);
  fs::create_directories(out / "work", ec);
  if (ec) return Error{fmt::format("{}: {}", out.string(), ec.message())};
  std::vector<fs::path> suite_dirs;
  for (const auto& e : fs::directory_iterator(counts, ec))
    if (e.is_directory()) suite_dirs.push_back(e.path());
  std::sort(suite_dirs.begin(), suite_dirs.end());
  std::vector<fs::path> suite_infos;
  for (const auto& dir : suite_dirs) {
    SuiteCoverage s;
    s.suite = dir.filename().string();
    s.missing = read_missing(dir);
    fs::path info = out / (s.suite + ".info");
    TRACEBED_ASSIGN_OR_RETURN(s.info, capture_suite(build, dir, out / "work" / s.suite, info));
    if (s.info.empty()) {
      if (s.missing.empty()) s.missing.push_back("no counts came back");
    } else {
      TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(s.info));
      TRACEBED_ASSIGN_OR_RETURN(Tracefile t, parse_tracefile(text, s.info.string()));
      s.total = summarize(t).back();
      suite_infos.push_back(s.info);
    }
    r.suites.push_back(std::move(s));
  }
  if (suite_infos.empty())
    return Error{fmt::format("no suite brought kernel counts back (in {}): was the kernel built with --gcov?",
                             counts.string())};
  r.total_info = out / "total.info";
  TRACEBED_TRY(add_up(suite_infos, r.total_info, "adding up the suites"));
  fs::remove_all(out / "work", ec);
  r.html = out / "html";
  TRACEBED_TRY(run_lcov({"genhtml", "--quiet", "--branch-coverage", "--prefix", build.sources.string(),
                         "--title", fmt::format("tracebed: {}", fmt::join(build.paths, ", ")), "--output-directory",
                         r.html.string(), r.total_info.string()},
                        "writing the HTML report"));
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(r.total_info));
  TRACEBED_ASSIGN_OR_RETURN(Tracefile total, parse_tracefile(text, r.total_info.string()));
  r.files = summarize(total);
  r.markdown = render(r, build);
  r.table = out / "coverage.md";
  TRACEBED_TRY(base::write_file_atomic(r.table, r.markdown));
  r.json = out / "coverage.json";
  TRACEBED_TRY(base::write_file_atomic(r.json, render_json(r, build)));
  return r;
}

}  // namespace tracebed::coverage
