#include "framework/base/install_layout.h"
#include "framework/vm/kernels/catalogue.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <optional>

#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include "framework/base/bytes.h"
#include "framework/base/files.h"
#include "framework/base/lock_file.h"
#include "framework/vm/kernels/apt.h"
#include "framework/vm/kernels/cache_entry.h"
#include "framework/vm/cache/cache.h"
#include "framework/vm/kernels/tree_build.h"

namespace tracebed::vm {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

std::string deb_file_name(const DebPackage& p) {
  std::string v = p.version;
  for (size_t i; (i = v.find(':')) != std::string::npos;) v.replace(i, 1, "%3a");
  return fmt::format("{}_{}_{}.deb", p.name, v, p.arch);
}

namespace {

fs::path kernel_root(const KernelSpec& spec) {
  std::string key;
  if (spec.build) key = build_recipe_key(*spec.build);
  for (const auto& p : spec.packages) key += p.name + "=" + p.version + ":" + p.sha256 + "\n";
  bool gcov = spec.build && !spec.build->gcov_paths.empty();
  return cache_dir() / "kernels" / fmt::format("{}{}-{}", spec.name, gcov ? "-gcov" : "", content_hash(key).substr(0, 12));
}


// Moves each of `pkgs` that apt-get left whole in `tmp` (its pinned
// sha256) into `debs`; the names of those that are not there whole.
Result<std::vector<std::string>> keep_whole_debs(const std::vector<DebPackage>& pkgs, const fs::path& tmp,
                                                 const fs::path& debs) {
  std::vector<std::string> not_whole;
  for (const auto& pkg : pkgs) {
    fs::path got = tmp / deb_file_name(pkg);
    std::error_code ec;
    if (!fs::exists(got, ec)) {
      not_whole.push_back(fmt::format("{} {} (not downloaded)", pkg.name, pkg.version));
      continue;
    }
    TRACEBED_ASSIGN_OR_RETURN(std::string sum, sha256_of(got));
    if (sum != pkg.sha256) {
      not_whole.push_back(
          fmt::format("{} {} (has sha256 {}, the catalogue pins {})", pkg.name, pkg.version, sum, pkg.sha256));
      continue;
    }
    fs::rename(got, debs / deb_file_name(pkg), ec);
    if (ec) return Error{fmt::format("{}: {}", (debs / deb_file_name(pkg)).string(), ec.message())};
  }
  return not_whole;
}

// Whether apt-get's output says it does not know a package or version.
bool apt_could_not_find(const std::string& output) {
  return output.find("not found") != std::string::npos || output.find("Unable to locate") != std::string::npos;
}

// Downloads `pkgs` into `debs` with one apt-get call (its start-up over six
// suites' lists costs seconds) and checks each against its sha256. When the
// download fails (the archive unreachable, a connection cut), the packages
// that did arrive whole are kept, so a rerun fetches only the rest.
Status download(const Catalogue& catalogue, const std::string& who, const std::string& suite,
                const std::vector<DebPackage>& pkgs, const fs::path& debs) {
  PrivateApt apt(catalogue.apt_sources());
  TRACEBED_TRY(apt.ensure_lists());

  std::error_code ec;
  fs::path tmp = debs / fmt::format("partial-{}", getpid());
  if (fs::create_directories(tmp, ec); ec)
    return Error{fmt::format("{}: cannot write to the download cache {}: {}", who, debs.string(), ec.message())};
  std::vector<std::string> args = {"download"};
  std::vector<std::string> names;
  for (const auto& pkg : pkgs) {
    args.push_back(pkg.name + "=" + pkg.version);
    names.push_back(fmt::format("{} {}", pkg.name, pkg.version));
  }
  progress(fmt::format("{}: downloading {}", who, fmt::join(names, ", ")));
  std::optional<ProcessResult> failed;
  for (int attempt = 0; attempt < 2; ++attempt) {
    TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, apt.run("apt-get", args, 1200s, Output::tee, tmp));
    if (r.status == 0) {
      failed.reset();
      break;
    }
    failed = std::move(r);
    if (attempt > 0 || !apt_could_not_find(failed->output)) break;
    // The lists may predate the pinned version: refresh once.
    TRACEBED_TRY(apt.update());
  }
  auto not_whole = keep_whole_debs(pkgs, tmp, debs);
  fs::remove_all(tmp, ec);
  if (!not_whole) return not_whole.error();
  if (!failed) {
    if (!not_whole->empty())
      return Error{fmt::format("{}: apt-get download succeeded, but not for {}", who, fmt::join(*not_whole, "; "))};
    return {};
  }
  const std::string& out = failed->output;
  // The archive answered, the cache's disk did not take it.
  for (std::string_view disk : {"No space left on device", "Read-only file system", "Disk quota exceeded"})
    if (out.find(disk) != std::string::npos)
      return Error{fmt::format("{}: apt-get download {} could not write to the download cache {} ({}): {}", who,
                               fmt::join(names, ", "), debs.string(), disk, out)};
  if (apt_could_not_find(out))
    return Error{fmt::format("{}: {} not found in the apt sources ({}): {}", who, fmt::join(names, ", "), suite, out)};
  std::string kept;
  if (not_whole->size() < pkgs.size())
    kept = fmt::format("; the {} of {} packages that arrived whole are kept, a rerun fetches the rest",
                       pkgs.size() - not_whole->size(), pkgs.size());
  return Error{fmt::format("{}: apt-get download failed for {} (is the Debian archive reachable?){}: {}", who,
                           fmt::join(*not_whole, "; "), kept, out)};
}

// A "build" entry: {"kind": "build", "recipe": "kernels/NAME/recipe.json"},
// paths relative to the catalogue.
Status load_build_recipe(const fs::path& catalogue_path, const nlohmann::json& entry, KernelSpec& spec) {
  fs::path recipe_path = entry.at("recipe").get<std::string>();
  if (recipe_path.is_relative()) recipe_path = catalogue_path.parent_path() / recipe_path;
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(recipe_path));
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object())
    return Error{fmt::format("{}: recipe {} is not valid JSON", spec.name, recipe_path.string())};
  try {
    BuildRecipe r;
    const auto& src = json.at("source");
    r.source = {src.at("name").get<std::string>(), src.at("version").get<std::string>(),
                src.at("sha256").get<std::string>(), src.value("arch", "all")};
    r.base_config = json.value("base_config", "tinyconfig");
    r.fragment = json.at("fragment").get<std::string>();
    if (r.fragment.is_relative()) r.fragment = recipe_path.parent_path() / r.fragment;
    TRACEBED_ASSIGN_OR_RETURN(r.fragment_text, base::read_file(r.fragment));
    spec.suite = json.value("suite", spec.suite);
    spec.release = json.value("release", spec.release);
    spec.build = std::move(r);
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}: recipe {}: {}", spec.name, recipe_path.string(), e.what())};
  }
  return {};
}

}  // namespace

Result<std::string> sha256_of(const fs::path& file) {
  TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process({"sha256sum", file.string()}, 120s));
  if (r.status != 0 || r.output.size() < 64) return Error{fmt::format("sha256sum {} failed: {}", file.string(), r.output)};
  return r.output.substr(0, 64);
}

std::string build_recipe_key(const BuildRecipe& recipe) {
  std::string key = fmt::format("source {}={}:{}\nbase_config {}\nfragment\n{}", recipe.source.name,
                                recipe.source.version, recipe.source.sha256, recipe.base_config, recipe.fragment_text);
  // Without gcov the key is what it always was: the cached kernels stay.
  if (!recipe.gcov_paths.empty()) key += fmt::format("gcov {}\n", fmt::join(recipe.gcov_paths, ","));
  return key;
}

fs::path kernel_cache_dir(const KernelSpec& spec) { return kernel_root(spec); }

Result<std::vector<fs::path>> fetch_debs(const Catalogue& catalogue, const std::string& who, const std::string& suite,
                                         const std::vector<DebPackage>& pkgs) {
  fs::path debs = cache_dir() / "debs";
  std::error_code ec;
  fs::create_directories(debs, ec);
  std::vector<fs::path> out;
  std::vector<DebPackage> missing;
  for (const auto& pkg : pkgs) {
    fs::path deb = debs / deb_file_name(pkg);
    out.push_back(deb);
    if (fs::exists(deb)) {
      TRACEBED_ASSIGN_OR_RETURN(std::string sum, sha256_of(deb));
      if (sum == pkg.sha256) continue;
      progress(fmt::format("{}: cached {} does not match its sha256, downloading again", who, deb.filename().string()));
      fs::remove(deb, ec);
    }
    missing.push_back(pkg);
  }
  if (!missing.empty()) TRACEBED_TRY(download(catalogue, who, suite, missing, debs));
  return out;
}

Result<fs::path> fetch_deb(const Catalogue& catalogue, const std::string& who, const std::string& suite,
                           const DebPackage& pkg) {
  TRACEBED_ASSIGN_OR_RETURN(auto debs, fetch_debs(catalogue, who, suite, {pkg}));
  return debs.front();
}

fs::path Catalogue::default_path() {
  if (const char* p = std::getenv("TRACEBED_CATALOGUE"); p && *p) return p;
  return base::shared_data("kernels.json", TRACEBED_SOURCE_DIR, "vmimages/kernels.json");
}

Result<Catalogue> Catalogue::load(fs::path path) {
  if (path.empty()) path = default_path();
  TRACEBED_ASSIGN_OR_RETURN(std::string text, base::read_file(path));
  auto json = nlohmann::json::parse(text, nullptr, false);
  if (json.is_discarded() || !json.is_object()) return Error{fmt::format("{}: not valid JSON", path.string())};
  Catalogue c;
  c.path_ = path;
  try {
    c.apt_sources_ = json.at("apt_sources").get<std::vector<std::string>>();
    c.default_ = json.value("default", "debian-6.12");
    for (const auto& [name, k] : json.at("kernels").items()) {
      KernelSpec s;
      s.name = name;
      s.suite = k.value("suite", "");
      s.release = k.value("release", "");
      for (const auto& p : k.value("packages", nlohmann::json::array()))
        s.packages.push_back({p.at("name").get<std::string>(), p.at("version").get<std::string>(),
                              p.at("sha256").get<std::string>()});
      s.vmlinuz = k.value("vmlinuz", "");
      s.config = k.value("config", "");
      s.modules_dir = k.value("modules_dir", "");
      s.modules = k.value("modules", std::vector<std::string>{});
      if (k.value("kind", "debs") == "build") {
        if (Status st = load_build_recipe(path, k, s); !st) return st.error().within(path.string());
        s.selftests = s.build->source;
        s.selftests_suite = s.suite;
      }
      if (k.contains("selftests")) {
        const auto& st = k.at("selftests");
        s.selftests = DebPackage{st.at("name").get<std::string>(), st.at("version").get<std::string>(),
                                 st.at("sha256").get<std::string>(), st.value("arch", "all")};
        s.selftests_suite = st.value("suite", s.suite);
      }
      if (k.contains("bzimage")) {
        s.local_image = k.at("bzimage").get<std::string>();
        if (s.local_image.is_relative()) s.local_image = path.parent_path() / s.local_image;
        s.local_modules_dir = k.value("modules_dir", "");
      }
      c.kernels_[name] = std::move(s);
    }
  } catch (const nlohmann::json::exception& e) {
    return Error{fmt::format("{}: {}", path.string(), e.what())};
  }
  return c;
}

namespace {

// A tree build's kernel directory; a source tree itself is built first.
Result<KernelSpec> resolve_directory(const fs::path& dir) {
  if (is_kernel_tree(dir))
    return Error{
        fmt::format("{} is a kernel source tree: `tracebed test --kernel {}` builds and tests it; for other "
                    "commands build it with `tracebed kernels build --tree {}` and give the path it prints",
                    dir.string(), dir.string(), dir.string())};
  if (!is_built_tree_kernel(dir))
    return Error{
        fmt::format("kernel directory {}: no bzImage and .complete (not a kernel built by `tracebed kernels "
                    "build --tree`)",
                    dir.string())};
  KernelSpec s;
  fs::path abs = fs::absolute(dir);
  s.local_image = abs / "bzImage";
  // <cache>/trees/NAME-HASH/kernel: the build's name, not "kernel"; a
  // catalogue build's entry (<cache>/kernels/NAME-gcov-HASH) is named itself.
  s.name = (abs.filename() == "kernel" ? abs.parent_path() : abs).filename().string();
  if (fs::is_directory(abs / "lib" / "modules")) {
    s.local_modules_dir = abs / "lib" / "modules";
    s.local_carry_modules = true;
  }
  s.modules = {"virtio_pci", "virtio_console"};
  return s;
}

}  // namespace

Result<KernelSpec> Catalogue::resolve(const std::string& name_or_path) const {
  if (auto it = kernels_.find(name_or_path); it != kernels_.end()) return it->second;
  std::string image = name_or_path, modules;
  // IMAGE:MODULES_DIR (a comma too, as before; `matrix --kernels` splits
  // its list on commas, so the colon is the form that works everywhere).
  if (auto sep = name_or_path.find_first_of(":,"); sep != std::string::npos) {
    image = name_or_path.substr(0, sep);
    modules = name_or_path.substr(sep + 1);
  }
  if (fs::is_directory(image) && modules.empty()) return resolve_directory(image);
  if (image.find('/') == std::string::npos && !fs::exists(image)) {
    std::string names;
    for (const auto& [n, _] : kernels_) names += (names.empty() ? "" : ", ") + n;
    return Error{fmt::format("unknown kernel '{}': not in {} ({}) and not a file", name_or_path, path_.string(), names)};
  }
  if (!fs::is_regular_file(image)) return Error{fmt::format("kernel image {}: no such file", image)};
  KernelSpec s;
  s.local_image = fs::absolute(image);
  s.name = s.local_image.filename().string();
  if (!modules.empty()) {
    if (!fs::is_directory(modules)) return Error{fmt::format("modules directory {}: no such directory", modules)};
    s.local_modules_dir = fs::absolute(modules);
  }
  s.modules = {"virtio_pci", "virtio_console"};
  return s;
}

bool kernel_cached(const KernelSpec& spec) {
  return spec.local() || fs::exists(kernel_root(spec) / ".complete");
}

Result<std::string> bzimage_release(const fs::path& image) {
  std::ifstream in(image, std::ios::binary);
  if (!in) return Error{fmt::format("kernel image {}: cannot open", image.string())};
  std::vector<uint8_t> head(64 * 1024);
  in.read(reinterpret_cast<char*>(head.data()), static_cast<std::streamsize>(head.size()));
  head.resize(static_cast<size_t>(in.gcount()));
  if (head.size() < 0x210 || std::memcmp(head.data() + 0x202, "HdrS", 4) != 0)
    return Error{fmt::format("kernel image {}: not a bzImage (no HdrS setup header at 0x202)", image.string())};
  uint16_t off = load<uint16_t>(head.data() + 0x20e, Endian::little);
  size_t pos = size_t{off} + 0x200;
  if (off == 0 || pos >= head.size()) return Error{fmt::format("kernel image {}: no kernel_version string", image.string())};
  std::string_view v(reinterpret_cast<const char*>(head.data() + pos), head.size() - pos);
  v = v.substr(0, v.find_first_of(" \0", 0, 2));
  if (v.empty()) return Error{fmt::format("kernel image {}: empty kernel_version string", image.string())};
  return std::string(v);
}

namespace {

// A bzImage of the user's: its release from the image, its modules and
// the .config of the build tree it sits in.
Result<KernelFiles> local_kernel(const KernelSpec& spec, KernelFiles files) {
  files.vmlinuz = spec.local_image;
  TRACEBED_ASSIGN_OR_RETURN(files.release, bzimage_release(spec.local_image));
  files.modules_dir = spec.local_modules_dir;
  if (!files.modules_dir.empty() && fs::exists(files.modules_dir / files.release)) files.modules_dir /= files.release;
  // A kernel build tree keeps .config beside arch/x86/boot/bzImage.
  for (auto dir = spec.local_image.parent_path(); !dir.empty() && dir != dir.root_path(); dir = dir.parent_path())
    if (fs::exists(dir / ".config")) {
      files.config = dir / ".config";
      break;
    }
  if (!files.modules_dir.empty() && fs::exists(files.modules_dir / "config")) files.config = files.modules_dir / "config";
  files.carry_modules = spec.local_carry_modules && !files.modules_dir.empty();
  return files;
}

// A kernel built from a recipe: what `tracebed kernels build` left in the
// cache, checked whole.
Result<KernelFiles> built_kernel(const KernelSpec& spec, const fs::path& root, KernelFiles files) {
  // The guest needs nothing loaded at boot; the modules it was built with
  // (lib/modules/REL, when MODULES=y) go into the image for tests to load.
  files.modules.clear();
  files.vmlinuz = root / "bzImage";
  files.config = root / "config";
  auto release = base::read_file(root / ".complete");
  if (!release)
    return Error{fmt::format("{} is built from source and is not built yet (no {}): run `tracebed kernels build {}` "
                             "(15-50 minutes on two cores)",
                             spec.name, root.string(), spec.name)};
  files.release = release->substr(0, release->find('\n'));
  if (auto whole = check_cache_entry(root, kBuiltKernelFiles); !whole) {
    // Hours of work, so not started here: the next build starts afresh.
    std::error_code ec;
    fs::remove(root / ".complete", ec);
    return Error{fmt::format("{}: the cached build is damaged ({}); `tracebed kernels build {}` builds it again",
                             spec.name, whole.error().message, spec.name)};
  }
  if (fs::path dir = root / "lib" / "modules" / files.release; fs::is_directory(dir)) {
    files.modules_dir = dir;
    files.carry_modules = true;
  }
  return files;
}

// The packages downloaded and unpacked beside root, then moved to it with
// the completion marker of the files that must not change.
Status unpack_packages(const Catalogue& catalogue, const KernelSpec& spec, const fs::path& root,
                       const std::vector<fs::path>& hashed) {
  std::vector<fs::path> deb_paths;
  for (const auto& pkg : spec.packages) {
    TRACEBED_ASSIGN_OR_RETURN(fs::path deb, fetch_deb(catalogue, spec.name, spec.suite, pkg));
    deb_paths.push_back(deb);
  }
  std::error_code ec;
  fs::path tmp = root;
  tmp += fmt::format(".partial{}", getpid());
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  for (const auto& deb : deb_paths) {
    progress(fmt::format("{}: unpacking {}", spec.name, deb.filename().string()));
    TRACEBED_ASSIGN_OR_RETURN(ProcessResult r, run_process({"dpkg", "-x", deb.string(), tmp.string()}, 600s));
    if (r.status != 0) {
      fs::remove_all(tmp, ec);
      return Error{fmt::format("{}: dpkg -x {} failed: {}", spec.name, deb.string(), r.output)};
    }
  }
  if (!fs::is_regular_file(tmp / spec.vmlinuz)) {
    fs::remove_all(tmp, ec);
    return Error{fmt::format("{}: the packages hold no {} (catalogue entry wrong?)", spec.name, spec.vmlinuz)};
  }
  TRACEBED_ASSIGN_OR_RETURN(std::string marker, completion_text(tmp, spec.release, hashed));
  fs::remove_all(root, ec);
  fs::rename(tmp, root, ec);
  if (ec) return Error{fmt::format("{}: {}", root.string(), ec.message())};
  TRACEBED_TRY(write_file_atomic(root / ".complete", marker));
  progress(fmt::format("{}: ready ({})", spec.name, spec.release));
  return {};
}

}  // namespace

Result<KernelFiles> fetch_kernel(const Catalogue& catalogue, const KernelSpec& spec) {
  KernelFiles files;
  files.name = spec.name;
  files.modules = spec.modules;
  if (spec.local()) return local_kernel(spec, std::move(files));
  fs::path root = kernel_root(spec);
  if (spec.build) return built_kernel(spec, root, std::move(files));
  files.release = spec.release;
  files.vmlinuz = root / spec.vmlinuz;
  files.config = root / spec.config;
  files.modules_dir = spec.modules_dir.empty() ? fs::path() : root / spec.modules_dir;
  const std::vector<fs::path> hashed = {spec.vmlinuz, spec.config};
  if (fs::exists(root / ".complete") && check_cache_entry(root, hashed)) return files;

  // Two test binaries may fetch the same kernel at once: one downloads, the
  // other waits and then finds it complete.
  TRACEBED_ASSIGN_OR_RETURN(base::LockFile lock, base::LockFile::acquire(root.parent_path() / ".lock"));
  if (fs::exists(root / ".complete")) {
    auto whole = check_cache_entry(root, hashed);
    if (whole) return files;
    progress(fmt::format("{}: {}; unpacking the kernel again", spec.name, whole.error().message));
    std::error_code ec;
    fs::remove(root / ".complete", ec);
  }
  TRACEBED_TRY(unpack_packages(catalogue, spec, root, hashed));
  return files;
}

}  // namespace tracebed::vm
