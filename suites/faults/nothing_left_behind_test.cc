// After the whole fault suite, nothing of it may be left: no QEMU still
// running for this process or for a tracebed it started that has ended, no
// run directory of theirs holding more than a failed guest's logs, nothing
// in the temporary directory.
// The suite gets a TMPDIR of its own (children inherit it), so the last
// check sees only what these tests left, even beside other suites.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "framework/vm/cache/cache_inventory.h"
#include "framework/vm/cache/cache.h"

namespace tracebed {
namespace {

namespace fs = std::filesystem;

bool alive(long pid) { return pid > 0 && ::kill(static_cast<pid_t>(pid), 0) == 0; }

// Ours: owned by this process, or by one that has ended (a tracebed the
// tests started, or one that died and left its QEMU behind).
bool ours_or_orphaned(long owner) { return owner == ::getpid() || (owner > 0 && !alive(owner)); }

class NothingLeftBehind : public ::testing::Environment {
 public:
  void SetUp() override {
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_root(), ec)) runs_before_.insert(e.path().filename().string());
    if (const char* t = std::getenv("TMPDIR")) old_tmpdir_ = t;
    std::string tmpl = (fs::temp_directory_path() / "tracebed-faults-XXXXXX").string();
    if (::mkdtemp(tmpl.data())) {
      own_tmp_ = tmpl;
      ::setenv("TMPDIR", tmpl.c_str(), 1);
    }
  }

  void TearDown() override {
    EXPECT_THAT(qemus_left(), ::testing::IsEmpty()) << "QEMU processes still running after the fault suite";
    EXPECT_THAT(run_dirs_left(), ::testing::IsEmpty()) << "run directories in " << run_root() << " with more than logs";
    if (own_tmp_.empty()) return;
    std::vector<std::string> left;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(own_tmp_, ec)) left.push_back(e.path().filename().string());
    EXPECT_THAT(left, ::testing::IsEmpty()) << "left in the suite's temporary directory " << own_tmp_;
    fs::remove_all(own_tmp_, ec);
    if (old_tmpdir_.empty()) ::unsetenv("TMPDIR");
    else ::setenv("TMPDIR", old_tmpdir_.c_str(), 1);
  }

 private:
  static fs::path run_root() { return vm::cache_dir() / "run"; }

  // "pid: command line" of each qemu-system whose run directory is ours.
  static std::vector<std::string> qemus_left() {
    std::vector<std::string> out;
    const std::string run = run_root().string() + "/";
    std::error_code ec;
    for (const auto& p : fs::directory_iterator("/proc", ec)) {
      std::ifstream in(p.path() / "cmdline", std::ios::binary);
      std::string cmdline((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      if (cmdline.find("qemu-system") == std::string::npos) continue;
      auto at = cmdline.find(run);
      if (at == std::string::npos) continue;
      if (!ours_or_orphaned(vm::run_dir_owner(std::string_view(cmdline).substr(at + run.size())))) continue;
      for (char& c : cmdline) c = c ? c : ' ';
      out.push_back(fmt::format("{}: {}", p.path().filename().string(), cmdline.substr(0, 300)));
    }
    return out;
  }

  // A guest that failed keeps its logs in its run directory (the error
  // names the console log); anything else there (a socket, an image) is
  // state nobody will clean.
  std::vector<std::string> run_dirs_left() const {
    std::vector<std::string> out;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(run_root(), ec)) {
      std::string name = e.path().filename().string();
      if (runs_before_.count(name) || !ours_or_orphaned(vm::run_dir_owner(name))) continue;
      std::vector<std::string> files;
      for (const auto& f : fs::directory_iterator(e.path(), ec)) {
        std::string file = f.path().filename().string();
        if (file != "console.log" && file != "qemu.log" && file != "agent.log") files.push_back(file);
      }
      if (!files.empty()) out.push_back(fmt::format("{}: {}", name, fmt::join(files, " ")));
    }
    return out;
  }

  std::set<std::string> runs_before_;
  std::string old_tmpdir_;
  fs::path own_tmp_;
};

[[maybe_unused]] ::testing::Environment* const kNothingLeftBehind =
    ::testing::AddGlobalTestEnvironment(new NothingLeftBehind);

}  // namespace
}  // namespace tracebed
