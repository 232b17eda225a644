// Building a catalogue kernel from Debian's linux-source package.
//
//   auto files = build_kernel(catalogue, spec, {.jobs = 2});
//
// Stages, each reported on stderr with the elapsed time: download and verify
// the source .deb (fetch_deb), unpack its tarball, `make <base_config>`, merge
// the fragment and `make olddefconfig`, check the .config, `make bzImage`,
// then cache bzImage and .config under kernel_cache_dir(spec). The check
// fails the build when an option of the fragment did not make it into the
// .config with the value asked for (Kconfig drops what it cannot satisfy
// without a word), naming the option and its `depends on` with the values
// the dependencies got.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/catalogue.h"

namespace tracebed::vm {

// CONFIG_NAME -> value as written ("y", "m", "n", "\"text\"", "0x10", "42").
// `# CONFIG_NAME is not set` is "n".
using KconfigValues = std::map<std::string, std::string>;

// Parses a config fragment or a .config. Blank lines and other comments are
// skipped; anything else is an Error naming `where` and the line number.
Result<KconfigValues> parse_kconfig_values(std::string_view text, std::string_view where);

struct ConfigMismatch {
  std::string option;  // CONFIG_NAME
  std::string wanted;
  std::string got;     // "n" when the .config does not mention it
};

// Every option of `wanted` whose value in `config` differs (absent counts as n).
std::vector<ConfigMismatch> check_config(const KconfigValues& wanted, const KconfigValues& config);

// The `depends on` expressions of `config SYMBOL` (without CONFIG_) in one
// Kconfig file's text, in order; empty when the file does not define it.
std::vector<std::string> kconfig_depends(std::string_view kconfig_text, std::string_view symbol);

// A depends-on expression with each symbol's value from the .config:
// "HAVE_FOO && !BAR" -> "HAVE_FOO=y && !BAR=n".
std::string annotate_depends(std::string_view expression, const KconfigValues& config);

struct BuildOptions {
  std::filesystem::path fragment;  // instead of the recipe's (another cache entry)
  unsigned jobs = 2;
};

// The same build kernel profiled with gcov under `paths` (gcov_build.h):
// build_kernel adds kGcovFragment to its fragment, and its cache entry is
// another (NAME-gcov-HASH).
// An Error for a kernel that is not built from a recipe.
Result<KernelSpec> with_gcov(KernelSpec spec, const std::vector<std::string>& paths);

// Builds the kernel (or finds it built) and returns it ready to boot. A
// gcov build (with_gcov) keeps its .gcno files and sources in <entry>/gcov.
Result<KernelFiles> build_kernel(const Catalogue& catalogue, KernelSpec spec, const BuildOptions& options);

}  // namespace tracebed::vm
