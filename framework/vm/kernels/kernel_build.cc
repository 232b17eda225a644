#include "framework/vm/kernels/kernel_build.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>

#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/base/text.h"
#include "framework/vm/kernels/cache_entry.h"
#include "framework/vm/kernels/gcov_build.h"
#include "framework/vm/kernels/kernel_build_steps.h"
#include "framework/vm/kernels/module_build.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

using base::trim;

bool is_symbol(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

// The source tree of a linux-source .deb, unpacked into `work` once (a
// second build reuses it).
Result<fs::path> unpack_source(const std::string& name, const fs::path& deb, const fs::path& work, KernelMake& km) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(work, ec); !ec && it != fs::directory_iterator(); ++it)
    if (it->is_directory() && fs::exists(it->path() / "Makefile") && fs::exists(it->path() / ".unpacked")) {
      if (Status whole = check_tree_hashes(it->path()); !whole) {
        progress(fmt::format("{}: {}; unpacking it again", name, whole.error().message));
        fs::remove_all(it->path(), ec);
        break;
      }
      km.stages().note(fmt::format("reusing {}", it->path().string()));
      return it->path();
    }
  ec.clear();
  auto run = [&](const std::vector<std::string>& argv, std::string what) -> Status {
    km.log() << "$ " << what << "\n";
    auto r = run_process(argv, 1200s, Output::capture);
    km.log() << (r ? r->output : r.error().message) << std::flush;
    if (r && r->status == 0) return {};
    return km.failed(what, r);
  };
  fs::path pkg = work / "deb";
  fs::remove_all(pkg, ec);
  TRACEBED_TRY(run({"dpkg", "-x", deb.string(), pkg.string()}, "dpkg -x " + deb.filename().string()));
  fs::path tarball;
  for (auto it = fs::directory_iterator(pkg / "usr" / "src", ec); !ec && it != fs::directory_iterator(); ++it)
    if (it->path().filename().string().find(".tar") != std::string::npos) tarball = it->path();
  if (tarball.empty())
    return Error{fmt::format("{}: {} holds no usr/src/*.tar.* source tarball", name, deb.filename().string())};
  TRACEBED_TRY(run({"tar", "-xf", tarball.string(), "-C", work.string()}, "unpacking " + tarball.filename().string()));
  fs::remove_all(pkg, ec);
  fs::path tree;
  for (auto it = fs::directory_iterator(work, ec); !ec && it != fs::directory_iterator(); ++it)
    if (it->is_directory() && fs::exists(it->path() / "Makefile")) tree = it->path();
  if (tree.empty()) return Error{fmt::format("{}: {} holds no kernel tree", name, tarball.string())};
  TRACEBED_TRY(record_tree_hashes(tree));
  return tree;
}

}  // namespace

Result<KconfigValues> parse_kconfig_values(std::string_view text, std::string_view where) {
  KconfigValues values;
  size_t line_no = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    ++line_no;
    if (line.empty()) continue;
    if (line.front() == '#') {
      // "# CONFIG_FOO is not set" is a value; every other comment is not.
      constexpr std::string_view kNotSet = " is not set";
      std::string_view body = trim(line.substr(1));
      if (body.starts_with("CONFIG_") && body.ends_with(kNotSet)) {
        std::string_view name = body.substr(0, body.size() - kNotSet.size());
        if (is_symbol(name)) values[std::string(name)] = "n";
      }
      continue;
    }
    size_t eq = line.find('=');
    std::string_view name = eq == std::string_view::npos ? line : trim(line.substr(0, eq));
    if (eq == std::string_view::npos || !name.starts_with("CONFIG_") || !is_symbol(name) ||
        trim(line.substr(eq + 1)).empty())
      return Error{fmt::format("{}:{}: not a config line (CONFIG_NAME=VALUE or # CONFIG_NAME is not set): {}", where,
                               line_no, line)};
    values[std::string(name)] = std::string(trim(line.substr(eq + 1)));
  }
  return values;
}

std::vector<ConfigMismatch> check_config(const KconfigValues& wanted, const KconfigValues& config) {
  std::vector<ConfigMismatch> bad;
  for (const auto& [name, value] : wanted) {
    auto it = config.find(name);
    std::string got = it == config.end() ? "n" : it->second;
    if (got != value) bad.push_back({name, value, got});
  }
  return bad;
}

std::vector<std::string> kconfig_depends(std::string_view text, std::string_view symbol) {
  std::vector<std::string> out;
  // Enclosing `if EXPR`, and menus and choices with their own `depends on`:
  // each applies to every entry inside (Documentation/kbuild/kconfig-language.rst).
  std::vector<std::vector<std::string>> blocks;
  std::vector<std::string>* target = nullptr;  // where this entry's `depends on` go
  std::string pending;                         // a depends line continued with a backslash
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    std::string_view line = trim(raw);
    if (auto hash = line.find('#'); hash != std::string_view::npos && line.find('"') == std::string_view::npos)
      line = trim(line.substr(0, hash));
    if (!pending.empty()) {
      bool more = line.ends_with("\\");
      pending += " " + std::string(trim(more ? line.substr(0, line.size() - 1) : line));
      if (!more && target) target->push_back(std::exchange(pending, {}));
      if (!more) pending.clear();
      continue;
    }
    // An entry or block starts at column 0 with a keyword; attributes are indented.
    bool top = !raw.empty() && !std::isspace(static_cast<unsigned char>(raw.front()));
    if (top) {
      target = nullptr;
      if (line.starts_with("if ")) {
        blocks.push_back({std::string(trim(line.substr(3)))});
      } else if (line == "endif" || line == "endmenu" || line == "endchoice") {
        if (!blocks.empty()) blocks.pop_back();
      } else if (line.starts_with("menu ") || line == "choice" || line.starts_with("choice ")) {
        blocks.emplace_back();
        target = &blocks.back();
      } else {
        for (std::string_view kw : {"config ", "menuconfig "})
          if (line.starts_with(kw) && trim(line.substr(kw.size())) == symbol) {
            for (const auto& b : blocks) out.insert(out.end(), b.begin(), b.end());
            target = &out;
          }
      }
      continue;
    }
    // Help text runs to the next entry and may say anything.
    if (line == "help" || line == "---help---") target = nullptr;
    if (!target || !line.starts_with("depends on")) continue;
    std::string_view expr = trim(line.substr(10));
    if (expr.ends_with("\\")) {
      pending = std::string(trim(expr.substr(0, expr.size() - 1)));
      continue;
    }
    target->emplace_back(expr);
  }
  return out;
}

std::string annotate_depends(std::string_view expression, const KconfigValues& config) {
  std::string out;
  size_t i = 0;
  while (i < expression.size()) {
    char c = expression[i];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < expression.size() && (std::isalnum(static_cast<unsigned char>(expression[j])) || expression[j] == '_'))
        ++j;
      std::string symbol(expression.substr(i, j - i));
      out += symbol;
      // Tristate constants are not symbols.
      if (symbol != "y" && symbol != "m" && symbol != "n") {
        auto it = config.find("CONFIG_" + symbol);
        out += "=" + (it == config.end() ? std::string("n") : it->second);
      }
      i = j;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

Result<KernelSpec> with_gcov(KernelSpec spec, const std::vector<std::string>& paths) {
  if (!spec.build)
    return Error{fmt::format("--gcov builds a kernel, and {} is not built from a recipe (kind \"build\" in the "
                             "catalogue); give your own tree as --kernel DIR instead",
                             spec.name)};
  if (paths.empty()) return Error{"--gcov needs at least one path to profile"};
  spec.build->gcov_paths = paths;
  return spec;
}

Result<KernelFiles> build_kernel(const Catalogue& catalogue, KernelSpec spec, const BuildOptions& options) {
  if (!spec.build) return Error{fmt::format("{} is not a build kernel (its catalogue entry has no recipe)", spec.name)};
  BuildRecipe& recipe = *spec.build;
  if (!options.fragment.empty()) {
    recipe.fragment = fs::absolute(options.fragment);
    TRACEBED_ASSIGN_OR_RETURN(recipe.fragment_text, base::read_file(recipe.fragment));
  }
  // gcov's options join the fragment here, not in the recipe: the cache
  // key names the paths instead.
  const bool gcov = !recipe.gcov_paths.empty();
  const std::string fragment_text = recipe.fragment_text + (gcov ? fmt::format("\n# --gcov\n{}", kGcovFragment) : "");
  // Check the fragment before spending minutes on a download.
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues wanted, parse_kconfig_values(fragment_text, recipe.fragment.string()));
  if (wanted.empty()) return Error{fmt::format("{}: the fragment sets no option", recipe.fragment.string())};

  fs::path root = kernel_cache_dir(spec);
  if (kernel_cached(spec)) return fetch_kernel(catalogue, spec);
  TRACEBED_TRY(require_build_tools(wanted, /*unpack=*/true));

  // One build per recipe at a time; a second caller waits, then finds it built.
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock,
                            base::LockFile::acquire(root.parent_path() / fmt::format(".lock-{}", root.filename().string())));
  std::error_code ec;
  if (kernel_cached(spec)) return fetch_kernel(catalogue, spec);

  // The work tree sits beside the cache entry and goes once the build is cached.
  fs::path work = root;
  work += ".build";
  fs::create_directories(work, ec);
  const std::string where = fmt::format("work tree kept in {}", work.string());
  KernelMake km(spec.name, work / "build.log", where);
  Stages& stages = km.stages();
  stages.start("download", fmt::format("{} {}", recipe.source.name, recipe.source.version));
  TRACEBED_ASSIGN_OR_RETURN(fs::path deb, fetch_deb(catalogue, spec.name, spec.suite, recipe.source));
  stages.start("unpack", deb.filename().string());
  TRACEBED_ASSIGN_OR_RETURN(fs::path tree, unpack_source(spec.name, deb, work, km));
  km.set_tree(tree, tree);
  stages.start("configure", fmt::format("make {} + {} + olddefconfig", recipe.base_config,
                                        recipe.fragment.filename().string()));
  TRACEBED_TRY(km.configure(recipe.base_config, {}, recipe.fragment, fragment_text));
  stages.start("check", fmt::format("every option of {} in .config", recipe.fragment.filename().string()));
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues config, km.check(wanted, recipe.fragment));
  stages.note(fmt::format("{} options as asked", wanted.size()));

  bool modules = config.count("CONFIG_MODULES") && config.at("CONFIG_MODULES") == "y";
  if (gcov) {
    TRACEBED_ASSIGN_OR_RETURN(std::vector<std::string> vars, gcov_make_variables(tree, recipe.gcov_paths));
    km.set_make_variables(std::move(vars));
  }
  TRACEBED_TRY(km.build(options.jobs, modules));
  stages.start("cache", root.string());
  fs::path staged = root;
  staged += fmt::format(".partial{}", getpid());
  TRACEBED_ASSIGN_OR_RETURN(std::string release, km.stage(staged, modules));
  if (gcov) TRACEBED_TRY(stage_gcov_files(tree, tree, recipe.gcov_paths, staged / "gcov"));
  if (!spec.release.empty() && release != spec.release)
    progress(fmt::format("{}: the recipe expects release {}, the bzImage says {}", spec.name, spec.release, release));
  km.log().close();
  fs::copy_file(km.log_path(), staged / "build.log", ec);
  TRACEBED_ASSIGN_OR_RETURN(std::string marker, completion_text(staged, release, kBuiltKernelFiles));
  TRACEBED_TRY(write_file_atomic(staged / ".complete", marker));
  fs::remove_all(root, ec);
  fs::rename(staged, root, ec);
  if (ec) return Error{fmt::format("{}: {}", root.string(), ec.message())};
  // About 1.5 GB in 80 000 files: minutes on a busy disk, so a stage of its own.
  stages.start("clean", fmt::format("removing the work tree {}", work.string()));
  fs::remove_all(work, ec);
  std::string summary = stages.summary();
  std::string took = minutes(stages.total());
  std::ofstream(root / "build.log", std::ios::app) << fmt::format("\nbuilt {} in {} ({})\n", release, took, summary);
  progress(fmt::format("{}: built {} in {} ({}); {}", spec.name, release, took, summary, (root / "bzImage").string()));
  TRACEBED_ASSIGN_OR_RETURN(KernelFiles files, fetch_kernel(catalogue, spec));
  if (modules) {
    // The kernel stays cached when one of ours does not build: fix it and
    // run `tracebed modules build` alone.
    if (auto kos = build_own_modules(files, options.jobs); !kos)
      return Error{fmt::format("{} is built, but not tracebed's modules (`tracebed modules build --kernel {} DIR` "
                               "builds one again): {}",
                               spec.name, spec.name, kos.error().message)};
  }
  return files;
}

}  // namespace tracebed::vm
