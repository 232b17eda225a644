// A kernel developer's own source tree (a git checkout or an unpacked
// tarball), built out of tree for `tracebed kernels build --tree DIR`,
// `tracebed test --kernel DIR` and `tracebed bisect`.
//
//   auto built = build_tree_kernel({.tree = "linux", .fragment = f, .jobs = 2});
//   // built->kernel_dir boots like a catalogue kernel: --kernel <it>
//
// The objects go to an O= directory under the cache, keyed by the tree's
// real path, the base config and the fragment's text, so the tree stays
// clean and the next build of the same tree only remakes what changed (make
// decides; a `git checkout` touches just the files it changes). Configured
// once per key: `make BASE`, the fragment merged, `make olddefconfig`, the
// same option check as a catalogue build (kernel_build_steps.h); later
// builds run make alone, which reruns Kconfig itself when a Kconfig file
// changed. The result is copied to <key dir>/kernel: bzImage, config,
// .config and lib/modules/RELEASE (with tracebed's modules) when MODULES=y.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include "framework/base/result.h"

namespace tracebed::vm {

struct TreeBuildOptions {
  std::filesystem::path tree;
  std::filesystem::path fragment;          // merged over the base config
  std::string base_config = "tinyconfig";  // tinyconfig, defconfig or olddefconfig
  std::filesystem::path start_config;      // with olddefconfig: the .config to start from
  unsigned jobs = 1;
  std::vector<std::string> gcov_paths;     // profiled with gcov (gcov_build.h) when not empty
};

// Where one tree build lives: <cache>/trees/<tree's name>-<hash>.
struct TreeBuildPaths {
  std::filesystem::path root;
  std::filesystem::path build;       // the O= directory
  std::filesystem::path kernel_dir;  // the built kernel, what --kernel takes
  std::string key;                   // what the hash covers
};

// Checks the options (a kernel tree, a fragment that parses, a known base)
// and names the directories; builds nothing.
Result<TreeBuildPaths> tree_build_paths(const TreeBuildOptions& options);

// True for a directory with the top of a kernel source tree (Makefile,
// Kconfig, kernel/).
bool is_kernel_tree(const std::filesystem::path& dir);

// True for a <key dir>/kernel that a build finished (bzImage, .complete).
bool is_built_tree_kernel(const std::filesystem::path& dir);

struct TreeBuild {
  std::filesystem::path kernel_dir;
  std::string release;
  double configure_seconds = 0;  // 0 when the build directory was configured before
  double make_seconds = 0;
  double total_seconds = 0;
};

// Configures (the first time), makes and copies out the kernel.
Result<TreeBuild> build_tree_kernel(const TreeBuildOptions& options);

}  // namespace tracebed::vm
