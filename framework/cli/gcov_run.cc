#include "framework/cli/gcov_run.h"

#include <cstdlib>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "framework/base/files.h"
#include "framework/cli/commands.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/kernels/gcov_build.h"
#include "framework/vm/kernels/kernel_build.h"

namespace tracebed::cli {

namespace fs = std::filesystem;

std::string gcov_kernel_or_exit(const std::string& kernel, const std::vector<std::string>& paths, unsigned jobs) {
  std::error_code ec;
  if (fs::is_directory(kernel, ec)) {
    auto g = vm::read_gcov_files(kernel);
    if (!g) usage_error(g.error().message);
    if (g->paths != paths)
      usage_error(fmt::format("{} profiles {}, not {}: give the same --gcov-paths, or build it again", kernel,
                              fmt::join(g->paths, ","), fmt::join(paths, ",")));
    return kernel;
  }
  const vm::Catalogue catalogue = load_catalogue();
  auto profiled = vm::with_gcov(resolve_kernel(catalogue, kernel, "--kernel"), paths);
  if (!profiled) usage_error(profiled.error().message);
  vm::BuildOptions options;
  options.jobs = jobs;
  auto files = vm::build_kernel(catalogue, *profiled, options);
  if (!files) cannot_run(files.error().message);
  return files->vmlinuz.parent_path().string();
}

void empty_gcov_counts(const fs::path& counts) {
  std::error_code ec;
  fs::remove_all(counts, ec);
  fs::create_directories(counts, ec);
  if (ec) cannot_run(fmt::format("cannot create {}: {}", counts.string(), ec.message()));
}

void collect_gcov_counts(const fs::path& counts) {
  empty_gcov_counts(counts);
  setenv("TRACEBED_GCOV_DIR", counts.c_str(), 1);
}

std::optional<coverage::GcovReport> report_gcov(const std::string& kernel_dir, const fs::path& counts,
                                                const fs::path& out, FILE* where) {
  auto g = vm::read_gcov_files(kernel_dir);
  if (!g) {
    fmt::print(stderr, "tracebed: no kernel coverage: {}\n", g.error().message);
    return std::nullopt;
  }
  coverage::ProfiledBuild build{g->objtree, g->srctree, g->objects(), g->sources(), g->paths};
  auto r = coverage::write_gcov_report(build, counts, out);
  if (!r) {
    fmt::print(stderr, "tracebed: no kernel coverage: {}\n", r.error().message);
    return std::nullopt;
  }
  fmt::print(where, "\nkernel coverage of {}: {}\n", fmt::join(g->paths, ", "), coverage::describe(r->files.back()));
  for (const auto& s : r->suites)
    if (!s.missing.empty()) fmt::print(where, "  {}: {}\n", s.suite, fmt::join(s.missing, "; "));
  fmt::print(where, "per file and suite: {}\nHTML: {}\n", r->table.string(), (r->html / "index.html").string());
  return std::move(r).value();
}

}  // namespace tracebed::cli
