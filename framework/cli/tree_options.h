// Options of the commands that build a kernel developer's own tree
// (`kernels build --tree`, `test --kernel DIR`, `bisect`): the fragment, the
// base config and make's jobs, with their defaults.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "framework/vm/kernels/tree_build.h"

namespace tracebed::cli {

struct TreeArgs {
  std::string tree;
  std::string fragment;  // default: tracebed-7.2's (the catalogue recipe's)
  std::string base = "tinyconfig";
  std::string config;  // with --base olddefconfig
  unsigned jobs = 0;   // 0: one per CPU
  std::vector<std::string> gcov_paths;  // --gcov: profiled with gcov (empty: not)
};

// --gcov and --gcov-paths, for a catalogue kernel or a tree.
struct GcovArgs {
  bool gcov = false;
  std::string paths;  // --gcov-paths; implies --gcov
};
void add_gcov_options(CLI::App& cmd, GcovArgs& args);
// The paths to profile (empty without --gcov); exits 2 on a bad list.
std::vector<std::string> gcov_paths(const GcovArgs& args);

// --<prefix>fragment, --<prefix>base, --<prefix>config (prefix "" or "kernel-").
void add_tree_config_options(CLI::App& cmd, TreeArgs& args, const std::string& prefix);

// make's default jobs: one per CPU we may run on.
unsigned tree_build_options_jobs();

// The build options with the defaults filled in; exits 2 on a bad option.
vm::TreeBuildOptions tree_build_options(const TreeArgs& args);

// Builds (make decides what) or exits 125 saying why not; prints the times.
vm::TreeBuild build_tree_or_exit(const TreeArgs& args);

}  // namespace tracebed::cli
