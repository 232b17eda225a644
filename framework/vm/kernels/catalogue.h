// The kernel catalogue (vmimages/kernels.json) and fetching its kernels.
//
// A catalogue kernel is pinned to Debian packages by name, version and
// sha256. fetch_kernel() downloads them through a private apt configuration
// inside the cache (the system's apt setup is never touched), checks the
// hashes, unpacks with `dpkg -x` and marks the result complete; a second call
// finds the unpacked tree and does not touch the network.
//
// A "build" kernel is compiled from Debian's linux-source package instead
// (kernel_build.h): its recipe pins the source package and names a base
// config and a config fragment; fetch_kernel finds it once built.
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

struct DebPackage {
  std::string name;
  std::string version;
  std::string sha256;
  std::string arch = "amd64";  // "all" for architecture-independent packages (linux-source)
};

// How a "build" kernel is made (vmimages/kernels/NAME/recipe.json).
struct BuildRecipe {
  DebPackage source;                 // e.g. linux-source-7.2, holding usr/src/linux-source-7.2.tar.xz
  std::string base_config = "tinyconfig";  // the make target the fragment is merged over
  std::filesystem::path fragment;    // absolute path of the config fragment
  std::string fragment_text;         // its content (part of the cache key)
  // Profiled with gcov (gcov_build.h) when not empty: another cache entry,
  // NAME-gcov-HASH.
  std::vector<std::string> gcov_paths;
};

// What a build kernel's cache directory name hashes: the source pin, the base
// config and the fragment's text. Changing any of them means another build.
std::string build_recipe_key(const BuildRecipe& recipe);

struct KernelSpec {
  std::string name;
  std::string suite;
  std::string release;  // expected `uname -r`; empty for a local image not yet inspected
  std::vector<DebPackage> packages;
  std::string vmlinuz;      // inside the unpacked packages
  std::string config;       // inside the unpacked packages
  std::string modules_dir;  // inside the unpacked packages
  std::vector<std::string> modules;  // needed for the agent channel unless built in
  // A local kernel: an absolute bzImage path and an optional modules tree.
  std::filesystem::path local_image;
  std::filesystem::path local_modules_dir;
  // A kernel built from a source tree (tree_build.h): the image carries its
  // modules (lib/modules/REL), as for a build kernel of the catalogue.
  bool local_carry_modules = false;
  // A kernel built from source ("kind": "build").
  std::optional<BuildRecipe> build;
  // The linux-source package whose selftests match this kernel ("selftests"
  // in the catalogue; a build kernel defaults to its recipe's source), and
  // the suite it comes from.
  std::optional<DebPackage> selftests;
  std::string selftests_suite;

  bool local() const { return !local_image.empty(); }
};

// A kernel ready to boot.
struct KernelFiles {
  std::string name;
  std::string release;
  std::filesystem::path vmlinuz;
  std::filesystem::path config;       // may not exist (local kernels)
  std::filesystem::path modules_dir;  // may be empty
  std::vector<std::string> modules;
  // The image carries every module of modules_dir (kernel/, extra/,
  // modules.*) at /lib/modules/RELEASE, loaded by tests, not at boot.
  bool carry_modules = false;
};

class Catalogue {
 public:
  // Loads `path`, or $TRACEBED_CATALOGUE, or the source tree's vmimages/kernels.json.
  static Result<Catalogue> load(std::filesystem::path path = {});
  static std::filesystem::path default_path();

  const std::map<std::string, KernelSpec>& kernels() const { return kernels_; }
  const std::vector<std::string>& apt_sources() const { return apt_sources_; }
  const std::string& default_kernel() const { return default_; }

  // A catalogue name, or a path to a bzImage/vmlinuz (for a local kernel the
  // modules directory can follow after a comma: PATH,MODULES_DIR), or the
  // kernel directory of a source tree's build (tree_build.h).
  Result<KernelSpec> resolve(const std::string& name_or_path) const;

 private:
  std::map<std::string, KernelSpec> kernels_;
  std::vector<std::string> apt_sources_;
  std::string default_;
  std::filesystem::path path_;
};

// Downloads (if needed), verifies and unpacks. Progress goes to stderr. A
// build kernel that is not built yet is an Error naming the command that
// builds it (a build takes minutes, not something to start inside a test).
Result<KernelFiles> fetch_kernel(const Catalogue& catalogue, const KernelSpec& spec);

// True when fetch_kernel would not need the network (or a build).
bool kernel_cached(const KernelSpec& spec);

// Where fetch_kernel keeps (or a build puts) this kernel:
// <cache>/kernels/NAME-HASH, the hash covering the pins or the recipe.
std::filesystem::path kernel_cache_dir(const KernelSpec& spec);

// The name apt-get download gives a package's file in <cache>/debs:
// PACKAGE_VERSION_ARCH.deb, with ':' escaped.
std::string deb_file_name(const DebPackage& p);

// The hex sha256 of a file (sha256sum), as the catalogue and apt pin them.
Result<std::string> sha256_of(const std::filesystem::path& file);

// Pinned .debs of one suite in <cache>/debs, those not cached yet
// downloaded with one apt-get call; paths in the order of `pkgs`.
Result<std::vector<std::filesystem::path>> fetch_debs(const Catalogue& catalogue, const std::string& who,
                                                      const std::string& suite, const std::vector<DebPackage>& pkgs);

// One pinned .deb in <cache>/debs, downloaded through the private apt lists
// if missing and checked against its sha256. `who` names the kernel in errors.
Result<std::filesystem::path> fetch_deb(const Catalogue& catalogue, const std::string& who, const std::string& suite,
                                        const DebPackage& pkg);

// The release string from a bzImage's setup header (Documentation/arch/x86/boot.rst:
// kernel_version at 0x20e points to "RELEASE (builder) #1 ..." at +0x200).
Result<std::string> bzimage_release(const std::filesystem::path& image);

}  // namespace tracebed::vm
