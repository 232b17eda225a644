// For the CLI tests: runs the built `tracebed` as a user would.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "framework/base/files.h"

namespace tracebed::cli::test {

struct CliRun {
  int status = -1;
  std::string out, err;
};

// Runs `tracebed ARGS` with stdout and stderr captured to files.
inline CliRun run_tracebed(const std::string& args) {
  namespace fs = std::filesystem;
  fs::path dir = fs::temp_directory_path() / ("tracebed-cli-test-" + std::to_string(getpid()));
  fs::create_directories(dir);
  std::string cmd = std::string(TRACEBED_BINARY_DIR) + "/tracebed " + args + " >" + (dir / "out").string() +
                    " 2>" + (dir / "err").string();
  CliRun run;
  int rc = std::system(cmd.c_str());
  run.status = WIFEXITED(rc) ? WEXITSTATUS(rc) : 128 + WTERMSIG(rc);
  auto slurp = [](const fs::path& p) {
    auto text = base::read_file(p);
    return text.ok() ? std::move(text).value() : std::string();
  };
  run.out = slurp(dir / "out");
  run.err = slurp(dir / "err");
  fs::remove_all(dir);
  return run;
}

// For a test that lists or runs guest suite binaries: a build without
// them (TRACEBED_GUEST_SUITES=OFF, the asan preset) has none to give.
#define TRACEBED_SKIP_WITHOUT_SUITE_BINARIES()                                                        \
  do {                                                                                               \
    if (!TRACEBED_GUEST_SUITES_BUILT)                                                                \
      GTEST_SKIP() << "this build has no guest suite binaries (TRACEBED_GUEST_SUITES=OFF)";          \
  } while (0)

}  // namespace tracebed::cli::test
