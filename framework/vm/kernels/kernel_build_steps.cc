#include "framework/vm/kernels/kernel_build_steps.h"

#include <unistd.h>

#include <cstdlib>
#include <map>

#include "framework/base/files.h"
#include "framework/base/text.h"
#include "framework/vm/kernels/module_build.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

namespace {

using base::trim;

// The last lines of a tool's output, for an error message.
std::string tail_lines(std::string_view text, size_t n) {
  size_t pos = text.size();
  while (n-- > 0 && pos > 0) {
    pos = text.rfind('\n', pos - 1);
    if (pos == std::string_view::npos) return std::string(text);
  }
  return std::string(text.substr(pos + 1));
}

// Debian's ccache package links gcc, cc, ... to ccache here.
constexpr const char* kCcacheLinks = "/usr/lib/ccache";

void put_ccache_first_on_path() {
  if (!fs::exists(fs::path(kCcacheLinks) / "gcc")) return;
  const char* path = std::getenv("PATH");
  std::string now = path ? path : "/usr/bin:/bin";
  if (now.starts_with(kCcacheLinks)) return;
  setenv("PATH", fmt::format("{}:{}", kCcacheLinks, now).c_str(), 1);
}

}  // namespace

std::string minutes(Clock::duration d) {
  auto s = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  return fmt::format("{}:{:02}", s / 60, s % 60);
}

void Stages::start(std::string_view stage, std::string_view what) {
  close();
  stage_ = stage;
  t_ = Clock::now();
  progress(fmt::format("{}: [{}] {} ({} elapsed)", name_, stage, what, minutes(Clock::now() - t0_)));
}

void Stages::note(std::string_view what) {
  progress(fmt::format("{}: [{}] {} ({} elapsed)", name_, stage_, what, minutes(Clock::now() - t0_)));
}

std::string Stages::summary() {
  close();
  return times_;
}

void Stages::close() {
  if (!stage_.empty()) times_ += fmt::format("{}{} {}", times_.empty() ? "" : ", ", stage_, minutes(Clock::now() - t_));
  stage_.clear();
}

KernelMake::KernelMake(std::string name, fs::path log_path, std::string where)
    : name_(std::move(name)),
      log_path_(std::move(log_path)),
      where_(std::move(where)),
      log_(log_path_, std::ios::app),
      stages_(name_) {}

Error KernelMake::failed(std::string_view what, const Result<ProcessResult>& r) const {
  std::string detail = r ? tail_lines(r->output, 15) : r.error().message;
  return Error{fmt::format("{}: {} failed; the log is {} ({}):\n{}", name_, what, log_path_.string(), where_, detail)};
}

Result<ProcessResult> KernelMake::make(const std::vector<std::string>& args, std::chrono::seconds timeout,
                                       const std::function<void(std::string_view)>& watch) {
  put_ccache_first_on_path();
  std::vector<std::string> argv = {"make"};
  if (out_ != src_) argv.push_back("O=" + out_.string());
  argv.insert(argv.end(), make_variables_.begin(), make_variables_.end());
  argv.insert(argv.end(), args.begin(), args.end());
  log_ << "$";
  for (const auto& a : argv) log_ << " " << a;
  log_ << "\n";
  log_.flush();
  return run_process(argv, timeout, Output::capture, src_, [&](std::string_view chunk) {
    log_ << chunk;
    log_.flush();
    if (watch) watch(chunk);
  });
}

Status KernelMake::configure(const std::string& base, const fs::path& start_config, const fs::path& fragment,
                             std::string_view fragment_text) {
  std::error_code ec;
  fs::create_directories(out_, ec);
  if (base == "olddefconfig") {
    fs::copy_file(start_config, out_ / ".config", fs::copy_options::overwrite_existing, ec);
    if (ec)
      return Error{fmt::format("{}: copying {} to {}: {}", name_, start_config.string(), out_.string(), ec.message())};
  } else {
    auto r = make({base}, 600s);
    if (!r || r->status != 0) return failed("make " + base, r);
  }
  // Kconfig lets a later assignment override an earlier one.
  {
    std::ofstream config(out_ / ".config", std::ios::app);
    config << "\n# " << fragment.filename().string() << "\n" << fragment_text << "\n";
    if (!config) return Error{fmt::format("{}: cannot append to {}", name_, (out_ / ".config").string())};
  }
  auto r = make({"olddefconfig"}, 600s);
  if (!r || r->status != 0) return failed("make olddefconfig", r);
  return {};
}

Result<KconfigValues> KernelMake::check(const KconfigValues& wanted, const fs::path& fragment) {
  TRACEBED_ASSIGN_OR_RETURN(std::string config_text, base::read_file(out_ / ".config"));
  TRACEBED_ASSIGN_OR_RETURN(KconfigValues config, parse_kconfig_values(config_text, (out_ / ".config").string()));
  if (auto bad = check_config(wanted, config); !bad.empty())
    return Error{fmt::format("{}: {} option(s) of {} did not make it into the .config:{}", name_, bad.size(),
                             fragment.string(), explain_mismatches(bad, config, src_))};
  return config;
}

Status KernelMake::build(unsigned jobs, bool modules) {
  std::string targets = modules ? "bzImage modules" : "bzImage";
  stages_.start("bzImage", fmt::format("make -j{} {} (log: {})", jobs, targets, log_path_.string()));
  auto last_note = Clock::now();
  size_t objects = 0;
  std::string last_line;
  std::vector<std::string> args = {fmt::format("-j{}", std::max(1u, jobs)), "bzImage"};
  if (modules) args.push_back("modules");
  auto r = make(args, 4h, [&](std::string_view chunk) {
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
      stages_.note(fmt::format("{} objects compiled, at: {}", objects, last_line));
    }
  });
  if (!r || r->status != 0) return failed("make " + targets, r);
  stages_.note(fmt::format("{} objects compiled", objects));
  return {};
}

Result<std::string> KernelMake::stage(const fs::path& staged, bool modules) {
  std::error_code ec;
  fs::remove_all(staged, ec);
  fs::create_directories(staged, ec);
  // A build tree keeps .config beside bzImage; so does the cache entry, so
  // that its bzImage given as a path (`--kernel DIR/bzImage`) finds it too.
  Status copied = base::copy_file(out_ / "arch" / "x86" / "boot" / "bzImage", staged / "bzImage");
  if (copied) copied = base::copy_file(out_ / ".config", staged / "config");
  if (copied) copied = base::copy_file(out_ / ".config", staged / ".config");
  // A staged directory that failed half-way (a full disk) goes: it is never
  // taken for a cache entry, but it would hold the disk's space.
  auto failed = [&](Error e) {
    std::error_code ignored;
    fs::remove_all(staged, ignored);
    return e;
  };
  if (!copied)
    return failed(Error{fmt::format("{}: copying bzImage and .config to {}: {}", name_, staged.string(),
                                    copied.error().message)});
  auto release = bzimage_release(staged / "bzImage");
  if (!release) return failed(release.error());
  if (modules) {
    stages_.start("modules_install", (staged / "lib" / "modules" / *release).string());
    if (Status st = install_built_modules(out_, staged, *release, log_); !st)
      return failed(
          Error{fmt::format("{}: {}; the log is {} ({})", name_, st.error().message, log_path_.string(), where_)});
  }
  return *release;
}

Status record_tree_hashes(const fs::path& tree) {
  auto r = run_process({"sh", "-c",
                        "find . -type f ! -name '.unpacked*' -print0 | LC_ALL=C sort -z | "
                        "xargs -0 -r sha256sum > .unpacked.partial && mv .unpacked.partial .unpacked"},
                       1200s, Output::capture, tree);
  if (!r) return r.error();
  if (r->status != 0) return Error{fmt::format("{}: hashing the unpacked tree failed: {}", tree.string(), r->output)};
  return {};
}

Status check_tree_hashes(const fs::path& tree) {
  // An older tracebed wrote "\n"; one sha256sum line is 64 digits, two
  // spaces, "./" and a name.
  std::error_code ec;
  if (fs::file_size(tree / ".unpacked", ec) < 68 || ec)
    return Error{fmt::format("{}: its .unpacked marker holds no hashes (unpacked by an older tracebed)", tree.string())};
  auto r = run_process({"sh", "-c", "sha256sum --quiet -c .unpacked 2>&1 | head -5"}, 1200s, Output::capture, tree);
  if (!r) return r.error();
  std::string said = std::string(base::trim(r->output));
  if (!said.empty()) return Error{fmt::format("{} changed since it was unpacked: {}", tree.string(), said)};
  return {};
}

Status require_build_tools(const KconfigValues& wanted, bool unpack) {
  std::vector<std::string> tools = {"make", "gcc", "flex", "bison", "bc"};
  if (unpack) tools.insert(tools.end(), {"tar", "xz", "dpkg"});
  // BTF is converted from DWARF by pahole (scripts/Makefile.btf); without it
  // Kconfig drops DEBUG_INFO_BTF only after the download and unpack.
  if (auto it = wanted.find("CONFIG_DEBUG_INFO_BTF"); it != wanted.end() && it->second == "y")
    tools.push_back("pahole");
  std::string missing;
  for (const std::string& tool : tools) {
    auto r = run_process({"sh", "-c", fmt::format("command -v {}", tool)}, 10s);
    if (!r || r->status != 0) missing += fmt::format(" {}", tool);
  }
  if (!missing.empty())
    return Error{
        fmt::format("building a kernel needs{} on PATH (Debian packages: ci/packages.d/kernel-build.txt)", missing)};
  return {};
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

}  // namespace tracebed::vm
