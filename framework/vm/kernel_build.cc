#include "framework/vm/kernel_build.h"

#include <unistd.h>

#include <cctype>
#include <chrono>
#include <fstream>

#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/base/text.h"
#include "framework/vm/module_build.h"
#include "framework/vm/process.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using base::trim;

bool is_symbol(std::string_view s) {
  if (s.empty()) return false;
  for (char c : s)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

std::string minutes(Clock::duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

// Progress lines name the stage and the time since the build started.
class Stages {
 public:
  explicit Stages(std::string name) : name_(std::move(name)) {}
  void start(std::string_view stage, std::string_view what) {
    close();
    stage_ = stage;
    t_ = Clock::now();
    progress(fmt::format("{}: [{}] {} ({} elapsed)", name_, stage, what, minutes(Clock::now() - t0_)));
  }
  void note(std::string_view what) {
    progress(fmt::format("{}: [{}] {} ({} elapsed)", name_, stage_, what, minutes(Clock::now() - t0_)));
  }
  // "download 0:03, unpack 0:40, ..." with the running stage closed.
  std::string summary() {
    close();
    return times_;
  }
  Clock::duration total() const { return Clock::now() - t0_; }

 private:
  void close() {
    if (!stage_.empty()) times_ += fmt::format("{}{} {}", times_.empty() ? "" : ", ", stage_, minutes(Clock::now() - t_));
    stage_.clear();
  }
  std::string name_;
  std::string stage_;
  std::string times_;
  Clock::time_point t0_ = Clock::now();
  Clock::time_point t_ = t0_;
};

Result<ProcessResult> run_logged(const std::vector<std::string>& argv, const fs::path& cwd, std::ofstream& log,
                                 std::chrono::seconds timeout, const std::function<void(std::string_view)>& watch = {}) {
  log << "$";
  for (const auto& a : argv) log << " " << a;
  log << "\n";
  log.flush();
  auto r = run_process(argv, timeout, Output::capture, cwd, [&](std::string_view chunk) {
    log << chunk;
    log.flush();
    if (watch) watch(chunk);
  });
  return r;
}

// The last lines of a tool's output, for an error message.
std::string tail_lines(std::string_view text, size_t n) {
  size_t pos = text.size();
  while (n-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string_view::npos) return std::string(text);
  }
  return std::string(text.substr(pos + 1));
}

// `depends on` of each option that did not come out as asked, from every
// Kconfig file of the tree that defines it.
std::string explain_mismatches(const std::vector<ConfigMismatch>& bad, const KconfigValues& config,
                               const fs::path& tree) {
  std::map<std::string, std::vector<std::string>> depends;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(tree, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (!it->is_regular_file() || !it->path().filename().string().starts_with("Kconfig")) continue;
    // Another architecture's definition of the same name (KVM has six) says nothing here.
    std::string rel = fs::relative(it->path(), tree, ec).string();
    if (rel.starts_with("arch/") && !rel.starts_with("arch/x86/")) continue;
    auto text = base::read_file(it->path());
    if (!text) continue;
    for (const auto& m : bad) {
      std::string symbol = m.option.substr(7);
      if (text->find("config " + symbol) == std::string::npos) continue;
      for (auto& d : kconfig_depends(*text, symbol)) depends[m.option].push_back(annotate_depends(d, config));
    }
  }
  std::string out;
  for (const auto& m : bad) {
    out += fmt::format("\n  {}: the fragment asks for {}, the .config has {}", m.option, m.wanted,
                       m.got == "n" ? "it not set" : m.got);
    auto it = depends.find(m.option);
    if (it == depends.end()) {
      out += " (no `depends on` in its Kconfig entry: a choice, an enclosing menu or a select decides it)";
      continue;
    }
    for (const auto& d : it->second) out += fmt::format("\n      depends on {}", d);
  }
  return out;
}

Status require_tools(const KconfigValues& wanted) {
  std::vector<std::string> tools = {"make", "gcc", "flex", "bison", "bc", "tar", "xz", "dpkg"};
  // BTF is converted from DWARF by pahole (scripts/Makefile.btf); without it
  // Kconfig drops DEBUG_INFO_BTF only after the download and unpack.
  if (auto it = wanted.find("CONFIG_DEBUG_INFO_BTF"); it != wanted.end() && it->second == "y") tools.push_back("pahole");
  std::string missing;
  for (const std::string& tool : tools) {
    auto r = run_process({"sh", "-c", fmt::format("command -v {}", tool)}, 10s);
    if (!r || r->status != 0) missing += fmt::format(" {}", tool);
  }
  if (!missing.empty())
    return Error{fmt::format("building a kernel needs{} on PATH (Debian packages: ci/packages.d/kernel-build.txt)",
                             missing)};
  return {};
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

Result<KernelFiles> build_kernel(const Catalogue& catalogue, KernelSpec spec, const BuildOptions& options) {
  if (!spec.build) return Error{fmt::format("{} is not a build kernel (its catalogue entry has no recipe)", spec.name)};
  BuildRecipe& recipe = *spec.build;
  if (!options.fragment.empty()) {
    recipe.fragment = fs::absolute(options.fragment);
    TRACEBED_ASSIGN_OR_RETURN(recipe.fragment_text, base::read_file(recipe.fragment));
  }
  // Check the fragment before spending minutes on a download.
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues wanted, parse_kconfig_values(recipe.fragment_text, recipe.fragment.string()));
  if (wanted.empty()) return Error{fmt::format("{}: the fragment sets no option", recipe.fragment.string())};

  fs::path root = kernel_cache_dir(spec);
  if (kernel_cached(spec)) return fetch_kernel(catalogue, spec);
  TRACEBED_TRY(require_tools(wanted));

  // One build per recipe at a time; a second caller waits, then finds it built.
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock,
                            base::LockFile::acquire(root.parent_path() / fmt::format(".lock-{}", root.filename().string())));
  std::error_code ec;
  if (kernel_cached(spec)) return fetch_kernel(catalogue, spec);

  Stages stages(spec.name);
  stages.start("download", fmt::format("{} {}", recipe.source.name, recipe.source.version));
  TRACEBED_ASSIGN_OR_RETURN(fs::path deb, fetch_deb(catalogue, spec.name, spec.suite, recipe.source));

  // The work tree sits beside the cache entry and goes once the build is cached.
  fs::path work = root;
  work += ".build";
  fs::create_directories(work, ec);
  fs::path log_path = work / "build.log";
  std::ofstream log(log_path, std::ios::app);
  auto failed = [&](std::string what, const Result<ProcessResult>& r) -> Error {
    std::string detail = r ? tail_lines(r->output, 15) : r.error().message;
    return Error{fmt::format("{}: {} failed; the log is {} (work tree kept in {}):\n{}", spec.name, what,
                             log_path.string(), work.string(), detail)};
  };

  stages.start("unpack", deb.filename().string());
  fs::path tree;
  for (auto it = fs::directory_iterator(work, ec); !ec && it != fs::directory_iterator(); ++it)
    if (it->is_directory() && fs::exists(it->path() / "Makefile") && fs::exists(it->path() / ".unpacked"))
      tree = it->path();
  if (tree.empty()) {
    fs::path pkg = work / "deb";
    fs::remove_all(pkg, ec);
    auto r = run_logged({"dpkg", "-x", deb.string(), pkg.string()}, {}, log, 600s);
    if (!r || r->status != 0) return failed("dpkg -x " + deb.filename().string(), r);
    fs::path tarball;
    for (auto it = fs::directory_iterator(pkg / "usr" / "src", ec); !ec && it != fs::directory_iterator(); ++it)
      if (it->path().filename().string().find(".tar") != std::string::npos) tarball = it->path();
    if (tarball.empty())
      return Error{fmt::format("{}: {} holds no usr/src/*.tar.* source tarball", spec.name, deb.filename().string())};
    r = run_logged({"tar", "-xf", tarball.string(), "-C", work.string()}, {}, log, 1200s);
    if (!r || r->status != 0) return failed("unpacking " + tarball.filename().string(), r);
    fs::remove_all(pkg, ec);
    for (auto it = fs::directory_iterator(work, ec); !ec && it != fs::directory_iterator(); ++it)
      if (it->is_directory() && fs::exists(it->path() / "Makefile")) tree = it->path();
    if (tree.empty()) return Error{fmt::format("{}: {} holds no kernel tree", spec.name, tarball.string())};
    TRACEBED_TRY(write_file_atomic(tree / ".unpacked", "\n"));
  } else {
    stages.note(fmt::format("reusing {}", tree.string()));
  }

  stages.start("configure", fmt::format("make {} + {} + olddefconfig", recipe.base_config,
                                        recipe.fragment.filename().string()));
  auto r = run_logged({"make", recipe.base_config}, tree, log, 600s);
  if (!r || r->status != 0) return failed("make " + recipe.base_config, r);
  // Kconfig lets a later assignment override an earlier one.
  {
    std::ofstream config(tree / ".config", std::ios::app);
    config << "\n# " << recipe.fragment.filename().string() << "\n" << recipe.fragment_text << "\n";
    if (!config) return Error{fmt::format("{}: cannot append to {}", spec.name, (tree / ".config").string())};
  }
  r = run_logged({"make", "olddefconfig"}, tree, log, 600s);
  if (!r || r->status != 0) return failed("make olddefconfig", r);

  stages.start("check", fmt::format("every option of {} in .config", recipe.fragment.filename().string()));
  TRACEBED_ASSIGN_OR_RETURN(std::string config_text, base::read_file(tree / ".config"));
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues config, parse_kconfig_values(config_text, (tree / ".config").string()));
  if (auto bad = check_config(wanted, config); !bad.empty())
    return Error{fmt::format("{}: {} option(s) of {} did not make it into the .config:{}", spec.name, bad.size(),
                             recipe.fragment.string(), explain_mismatches(bad, config, tree))};
  stages.note(fmt::format("{} options as asked", wanted.size()));

  bool modules = config.count("CONFIG_MODULES") && config.at("CONFIG_MODULES") == "y";
  std::string targets = modules ? "bzImage modules" : "bzImage";
  stages.start("bzImage", fmt::format("make -j{} {} (log: {})", options.jobs, targets, log_path.string()));
  auto last_note = Clock::now();
  size_t objects = 0;
  std::string last_line;
  std::vector<std::string> make_argv = {"make", fmt::format("-j{}", std::max(1u, options.jobs)), "bzImage"};
  if (modules) make_argv.push_back("modules");
  r = run_logged(make_argv, tree, log, 4h,
                 [&](std::string_view chunk) {
                   for (size_t pos = 0; pos < chunk.size();) {
                     size_t nl = chunk.find('\n', pos);
                     std::string_view line = chunk.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
                     if (line.starts_with("  CC ")) ++objects;
                     if (!trim(line).empty()) last_line = std::string(trim(line));
                     if (nl == std::string_view::npos) break;
                     pos = nl + 1;
                   }
                   if (Clock::now() - last_note >= 60s) {
                     last_note = Clock::now();
                     stages.note(fmt::format("{} objects compiled, at: {}", objects, last_line));
                   }
                 });
  if (!r || r->status != 0) return failed("make " + targets, r);

  stages.start("cache", root.string());
  fs::path staged = root;
  staged += fmt::format(".partial{}", getpid());
  fs::remove_all(staged, ec);
  fs::create_directories(staged, ec);
  fs::copy_file(tree / "arch" / "x86" / "boot" / "bzImage", staged / "bzImage", ec);
  if (!ec) fs::copy_file(tree / ".config", staged / "config", ec);
  if (ec) return Error{fmt::format("{}: copying bzImage and .config to {}: {}", spec.name, staged.string(), ec.message())};
  // A build tree keeps .config beside bzImage; so does the cache entry, so
  // that its bzImage given as a path (`--kernel DIR/bzImage`) finds it too.
  fs::copy_file(tree / ".config", staged / ".config", ec);
  TRACEBED_ASSIGN_OR_RETURN(std::string release, bzimage_release(staged / "bzImage"));
  if (!spec.release.empty() && release != spec.release)
    progress(fmt::format("{}: the recipe expects release {}, the bzImage says {}", spec.name, spec.release, release));
  if (modules) {
    stages.start("modules_install", (staged / "lib" / "modules" / release).string());
    if (Status st = install_built_modules(tree, staged, release, log); !st)
      return Error{fmt::format("{}: {}; the log is {} (work tree kept in {})", spec.name, st.error().message,
                               log_path.string(), work.string())};
  }
  log.close();
  fs::copy_file(log_path, staged / "build.log", ec);
  TRACEBED_TRY(write_file_atomic(staged / ".complete", release + "\n"));
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
