// For the CLI tests: runs the built `tracebed` as a user would.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

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
    std::string s;
    if (std::FILE* f = std::fopen(p.c_str(), "rb")) {
      std::array<char, 65536> buf;
      size_t n;
      while ((n = std::fread(buf.data(), 1, buf.size(), f)) > 0) s.append(buf.data(), n);
      std::fclose(f);
    }
    return s;
  };
  run.out = slurp(dir / "out");
  run.err = slurp(dir / "err");
  fs::remove_all(dir);
  return run;
}

}  // namespace tracebed::cli::test
