// `tracebed matrix [--kernels a,b|all] [--filter F] [--jobs N] [--out DIR]
// [--gcov]`: every guest suite on every chosen kernel, resumable, with
// reports (and each kernel's gcov coverage);
// `tracebed matrix --compare OLD_DIR [--out NEW_DIR]`: what changed.
// The work is in framework/matrix; this file parses and dispatches.
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <fmt/format.h>

#include "framework/base/cpus.h"
#include "framework/base/files.h"
#include "framework/base/text.h"
#include "framework/cli/commands.h"
#include "framework/cli/gcov_run.h"
#include "framework/cli/tree_options.h"
#include "framework/matrix/compare.h"
#include "framework/matrix/crosscheck.h"
#include "framework/matrix/run_summary.h"
#include "framework/matrix/runner.h"
#include "framework/matrix/suite_list.h"
#include "framework/matrix/summary.h"
#include "framework/vm/guests/boot_history.h"
#include "framework/vm/kernels/catalogue.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::cli {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> split_commas(std::string_view s) {
  std::vector<std::string> out;
  for (std::string_view item : base::split(s, ',', {.skip_empty = true})) out.emplace_back(item);
  return out;
}

// What the kernel image is: its pinned packages, or a local image's content.
std::string identity_of(const vm::KernelSpec& spec) {
  if (spec.local()) {
    auto image = base::read_file(spec.local_image);
    return fmt::format("local {} {} modules {}", spec.local_image.string(),
                       image ? vm::content_hash(*image) : "unreadable", spec.local_modules_dir.string());
  }
  std::string id = fmt::format("{} {}", spec.name, spec.release);
  for (const auto& p : spec.packages) id += fmt::format(" {}={} {}", p.name, p.version, p.sha256);
  return id;
}

int default_jobs() {
  // A TCG guest keeps about one host core busy.
  return std::max(1, base::usable_cpus());
}

struct MatrixArgs {
  std::string kernels = "all", suites, filter, out = "tracebed-matrix", compare, accel, launcher, libvirt_uri;
  int jobs = default_jobs();
  unsigned timeout_seconds = 3600, boot_timeout_seconds = 0;
  bool force = false;
  GcovArgs gcov;
};

// A kernel profiled with --gcov: the directory it boots from and where its
// suites leave their counts.
struct GcovKernel {
  std::string dir;
  fs::path counts, report;
};

void declare_matrix_options(CLI::App& cmd, MatrixArgs& a) {
  cmd.add_option("--kernels", a.kernels, "comma-separated catalogue names or bzImage paths, or all")
      ->capture_default_str();
  cmd.add_option("--suites", a.suites,
                 "comma-separated suite binaries (hist or tracebed_suite_hist); `default` is every suite but "
                 "those run only on request (kselftest, bpftrace): --suites default,kselftest");
  cmd.add_option("--filter", a.filter, "GoogleTest filter (e.g. 'Basics*:Smoke*')");
  cmd.add_option("-j,--jobs", a.jobs, "suite binaries (guests) at a time, over all kernels")->capture_default_str();
  cmd.add_option("--out", a.out, "output directory")->capture_default_str();
  cmd.add_option("--compare", a.compare, "compare OLD_DIR's results with --out's instead of running");
  add_timeout_option(cmd, a.timeout_seconds, "seconds after which a suite binary (and its guest) is killed");
  cmd.add_option("--boot-timeout", a.boot_timeout_seconds,
                 "seconds to wait for a cold-booted guest's agent; by default " + vm::boot_timeout_rule())
      ->check(CLI::Range(1u, 3600u));
  cmd.add_option("--accel", a.accel, "accelerator for the guests (kvm, tcg); default: the suites' choice")
      ->check(CLI::IsMember({"kvm", "tcg"}));
  cmd.add_option("--launcher", a.launcher, "qemu or libvirt (default: $TRACEBED_LAUNCHER, else qemu)")
      ->check(CLI::IsMember({"qemu", "libvirt"}));
  cmd.add_option("--libvirt-uri", a.libvirt_uri,
                 "libvirt connection, or several separated by commas that the kernels take in turn "
                 "(default: $TRACEBED_LIBVIRT_URI, else libvirt's)");
  cmd.add_flag("--force", a.force, "rerun kernels whose results are current");
  add_gcov_options(cmd, a.gcov);
}

// `--compare OLD`: directories without readable results are a usage error
// (2), so a script reads 1 as "new failures" and nothing else.
Exit run_matrix_compare(const MatrixArgs& a) {
  auto before = matrix::load_summary(a.compare);
  if (!before) usage_error(before.error().message);
  auto after = matrix::load_summary(a.out);
  if (!after) usage_error(after.error().message);
  auto changes = matrix::compare(*before, *after);
  fmt::print("{} -> {}\n{}", a.compare, a.out, matrix::format_changes(changes));
  bool new_failures = !changes.empty() && changes.front().kind == matrix::Change::new_failure;
  return new_failures ? Exit::failed : Exit::passed;
}

// The built suites --suites names; with "default" among them, added to
// the default set.
std::vector<fs::path> chosen_suites(const std::string& asked) {
  const auto built = matrix::built_suites();
  if (built.empty()) cannot_run("no guest suites were built (tracebed-suites.txt is missing beside the executable)");
  std::vector<fs::path> suites = matrix::default_suites(built);
  if (asked.empty()) return suites;
  std::vector<std::string> wanted;
  bool with_default = false;
  for (auto& w : split_commas(asked)) {
    if (w == "default")
      with_default = true;
    else
      wanted.push_back(w);
  }
  auto chosen = matrix::choose_suites(built, wanted, [](const fs::path&) { return std::vector<std::string>{}; });
  if (!chosen) usage_error(chosen.error().message);
  if (!with_default) suites.clear();
  for (const auto& p : *chosen)
    if (std::find(suites.begin(), suites.end(), p) == suites.end()) suites.push_back(p);
  return suites;
}

// With --gcov each kernel is its gcov build (built here when it is not
// cached), and its suites count into out/gcov/<kernel>/counts. Counts are
// only a whole run's: every kernel runs again, as with --force.
matrix::RunOptions matrix_run_options(const MatrixArgs& a, std::vector<GcovKernel>* gcov) {
  if (a.jobs < 1) usage_error("--jobs must be at least 1");
  const vm::Catalogue catalogue = load_catalogue();
  std::vector<std::string> names = split_commas(a.kernels);
  if (names.empty()) usage_error("--kernels: no kernel named");
  if (names.size() == 1 && names[0] == "all") {
    names.clear();
    for (const auto& [n, _] : catalogue.kernels()) names.push_back(n);
  }
  const std::vector<std::string> profiled = gcov_paths(a.gcov);
  matrix::RunOptions o;
  for (const auto& name : names) {
    const vm::KernelSpec spec = resolve_kernel(catalogue, name, "--kernels");
    if (profiled.empty()) {
      o.kernels.push_back({name, identity_of(spec), spec.release, {}});
      continue;
    }
    GcovKernel k;
    k.dir = gcov_kernel_or_exit(name, profiled, tree_build_options_jobs());
    const fs::path base = fs::path(a.out) / "gcov" / matrix::file_name_for(name);
    k.counts = base / "counts";
    k.report = base / "report";
    empty_gcov_counts(k.counts);
    const vm::KernelSpec built = resolve_kernel(catalogue, k.dir, "--kernels");
    o.kernels.push_back({k.dir, identity_of(built), built.release, {"--tracebed_gcov_dir=" + k.counts.string()}});
    gcov->push_back(std::move(k));
  }
  o.suites = chosen_suites(a.suites);
  // What every guest image carries, built beside the executable.
  fs::path bin = fs::read_symlink("/proc/self/exe").parent_path();
  o.stamp_files = {bin / "tracebed-agent", bin / "tracebed-probe-target"};
  o.filter = a.filter;
  o.accel = a.accel;
  // Several libvirt URIs (comma-separated): the kernels take turns, so
  // each hypervisor runs its share of the guests.
  std::vector<std::string> uris = split_commas(a.libvirt_uri);
  if (uris.size() > 1) {
    o.suite_args = launcher_args(a.launcher, "");
    for (size_t i = 0; i < o.kernels.size(); ++i) o.kernels[i].suite_args = launcher_args("", uris[i % uris.size()]);
  } else {
    o.suite_args = launcher_args(a.launcher, a.libvirt_uri);
  }
  o.jobs = a.jobs;
  o.out = a.out;
  o.force = a.force || !profiled.empty();
  o.suite_timeout = std::chrono::seconds(a.timeout_seconds);
  return o;
}

// The table of kernels, each kernel's summary, where the reports are, and
// the cross-check with the kernel's own selftests when they ran.
void print_matrix(const matrix::Matrix& m, const fs::path& out) {
  // An UNRESOLVED column only when some case is, so the usual table is as it was.
  bool unresolved = false;
  for (const auto& k : m.kernels) unresolved |= k.counts().unresolved > 0;
  fmt::print("{:<16} {:<30} {:>5} {:>5} {}{:>5} {:>9}\n", "KERNEL", "RELEASE", "PASS", "SKIP",
             unresolved ? "UNRESOLVED " : "", "FAIL", "SECONDS");
  for (const auto& k : m.kernels) {
    const matrix::Counts c = k.counts();
    fmt::print("{:<16} {:<30} {:>5} {:>5} {}{:>5} {:>9.1f}\n", k.kernel, k.release.empty() ? "-" : k.release, c.pass,
               c.skip, unresolved ? fmt::format("{:>10} ", c.unresolved) : "", c.fail, k.wall_seconds);
  }
  for (const auto& k : m.kernels) fmt::print("\n{}", matrix::write_run_summary(k, {.failures = 8, .skip_reasons = 6}));
  fmt::print("\nreport: {} (and report.md)\n", (out / "report.html").string());
  if (std::string cc = matrix::cross_check_report(m.kernels); !cc.empty()) {
    fs::path file = out / "crosscheck.md";
    if (Status st = vm::write_file_atomic(file, cc); !st) fmt::print(stderr, "tracebed: {}\n", st.error().message);
    fmt::print("\n{}cross-check: {}\n", cc, file.string());
  }
}

Exit run_matrix_command(const MatrixArgs& a) {
  if (!a.compare.empty()) return run_matrix_compare(a);
  std::vector<GcovKernel> gcov;
  matrix::RunOptions o = matrix_run_options(a, &gcov);
  if (a.boot_timeout_seconds > 0) setenv("TRACEBED_BOOT_TIMEOUT", std::to_string(a.boot_timeout_seconds).c_str(), 1);
  auto m = matrix::run_matrix(o);
  if (!m) cannot_run(m.error().message);
  if (Status st = matrix::write_outputs(*m, o.out); !st) cannot_run(st.error().message);
  print_matrix(*m, o.out);
  // Each kernel's per-file table joins report.md, as `test --gcov`'s
  // joins its results table.
  for (const auto& k : gcov) {
    if (auto report = report_gcov(k.dir, k.counts, k.report, stdout))
      std::ofstream(fs::path(o.out) / "report.md", std::ios::app) << "\n" << k.dir << ":\n\n"
                                                                   << report->markdown;
  }
  std::vector<matrix::TestResult> all;
  for (const auto& k : m->kernels) all.insert(all.end(), k.tests.begin(), k.tests.end());
  return exit_for(matrix::verdict(all));
}

}  // namespace

void add_matrix_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("matrix", "every guest suite on several kernels; Markdown/HTML/JUnit/KTAP/JSON reports");
  auto args = std::make_shared<MatrixArgs>();
  declare_matrix_options(*cmd, *args);
  cmd->final_callback([args] { exit_with(run_matrix_command(*args)); });
}

}  // namespace tracebed::cli
