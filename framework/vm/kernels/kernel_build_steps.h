// The parts of a kernel build that catalogue kernels (build_kernel) and a
// developer's own tree (build_tree_kernel) share: progress by stage on
// stderr, every command and its output in one log, `make BASE` + fragment +
// `make olddefconfig`, the option check, `make bzImage [modules]` and
// copying the result into a cache entry.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "framework/base/result.h"
#include "framework/vm/kernels/kernel_build.h"
#include "framework/vm/cache/cache.h"

namespace tracebed::vm {

// Progress lines name the stage and the time since the build started.
class Stages {
 public:
  using Clock = std::chrono::steady_clock;
  explicit Stages(std::string name) : name_(std::move(name)) {}
  void start(std::string_view stage, std::string_view what);
  void note(std::string_view what);
  // "download 0:03, unpack 0:40, ..." with the running stage closed.
  std::string summary();
  Clock::duration total() const { return Clock::now() - t0_; }

 private:
  void close();
  std::string name_;
  std::string stage_;
  std::string times_;
  Clock::time_point t0_ = Clock::now();
  Clock::time_point t_ = t0_;
};

// "M:SS".
std::string minutes(std::chrono::steady_clock::duration d);

// Building one kernel source tree `src` into `out` (the same directory, or
// an O= directory outside it, which keeps `src` clean).
class KernelMake {
 public:
  // `name` starts every progress line and error; `where` ends errors
  // ("work tree kept in ..."). The log is appended to.
  KernelMake(std::string name, std::filesystem::path log_path, std::string where);
  // The tree to build and where: `src` itself, or an O= directory.
  void set_tree(std::filesystem::path src, std::filesystem::path out) {
    src_ = std::move(src);
    out_ = std::move(out);
  }

  // VAR=VALUE arguments of every make call (a gcov build's GCOV_PROFILE_x.o=y).
  void set_make_variables(std::vector<std::string> vars) { make_variables_ = std::move(vars); }

  Stages& stages() { return stages_; }
  const std::filesystem::path& log_path() const { return log_path_; }
  std::ofstream& log() { return log_; }
  // NAME: WHAT failed; the log is ... (WHERE):\n<the output's last lines>
  Error failed(std::string_view what, const Result<ProcessResult>& r) const;

  // `make [O=out] ARGS` in src (ccache's compiler links first on PATH when
  // ccache is installed: the command lines, and so kbuild's, stay the same).
  Result<ProcessResult> make(const std::vector<std::string>& args, std::chrono::seconds timeout,
                             const std::function<void(std::string_view)>& watch = {});
  // `make BASE`, unless BASE is olddefconfig (then `start_config` is the
  // .config to start from), the fragment appended, `make olddefconfig`.
  Status configure(const std::string& base, const std::filesystem::path& start_config,
                   const std::filesystem::path& fragment, std::string_view fragment_text);
  // The .config, or an Error naming each option of `wanted` it lacks and
  // that option's `depends on` with the values they got.
  Result<KconfigValues> check(const KconfigValues& wanted, const std::filesystem::path& fragment);
  // `make -jN bzImage [modules]`, a progress line a minute.
  Status build(unsigned jobs, bool modules);
  // bzImage and .config (as config and .config) into `staged`, with
  // lib/modules/RELEASE when `modules`. Returns the release.
  Result<std::string> stage(const std::filesystem::path& staged, bool modules);

 private:
  std::string name_;
  std::filesystem::path src_, out_, log_path_;
  std::string where_;
  std::vector<std::string> make_variables_;
  std::ofstream log_;
  Stages stages_;
};

// A source tree unpacked into a work directory is reused by the next build
// when one fails or is stopped; its marker file (`.unpacked`) holds
// sha256sum's line for every file it was unpacked with, so a tree damaged
// in between is found (and unpacked again) instead of built from.
Status record_tree_hashes(const std::filesystem::path& tree);
// An Error naming the files whose bytes changed or went (the first few),
// or a marker without hashes.
Status check_tree_hashes(const std::filesystem::path& tree);

// make, gcc, ... on PATH (pahole when the fragment asks for BTF), or an
// Error naming what is missing and the package list.
Status require_build_tools(const KconfigValues& wanted, bool unpack);

// Each .config option as the fragment asked it, or its mismatches (a line each).
std::string explain_mismatches(const std::vector<ConfigMismatch>& bad, const KconfigValues& config,
                               const std::filesystem::path& tree);

}  // namespace tracebed::vm
