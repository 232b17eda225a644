#include "framework/testing/kernel_gcov.h"

#include <errno.h>

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "framework/base/files.h"

namespace tracebed::testlib {

namespace fs = std::filesystem;

namespace {

constexpr uint8_t kDirType = 4;   // DT_DIR
constexpr uint8_t kFileType = 8;  // DT_REG; the .gcno entries are links to the build tree

// Every .gcda path under `dir` in the guest.
Status find_counts(agent::Client& agent, const std::string& dir, std::vector<std::string>& out, int depth) {
  // The objtree's path sits below gcov/: a dozen levels, not hundreds.
  if (depth > 40) return Error{fmt::format("{}: deeper than 40 directories", dir)};
  TRACEBED_ASSIGN_OR_RETURN(std::vector<agent::DirEntry> entries, agent.list_dir(dir));
  for (const auto& e : entries) {
    if (e.name == "." || e.name == "..") continue;
    std::string path = dir + "/" + e.name;
    if (e.type == kDirType) TRACEBED_TRY(find_counts(agent, path, out, depth + 1));
    else if (e.type == kFileType && e.name.ends_with(".gcda")) out.push_back(path);
  }
  return {};
}

}  // namespace

KernelGcov* KernelGcov::from_environment() {
  const char* dir = std::getenv("TRACEBED_GCOV_DIR");
  if (!dir || !*dir) return nullptr;
  static KernelGcov gcov(fs::path(dir) / program_invocation_short_name);
  return &gcov;
}

fs::path KernelGcov::boot_dir() const { return suite_dir_ / fmt::format("boot-{}", boots_); }

void KernelGcov::note_missing(std::string_view why) {
  std::error_code ec;
  fs::create_directories(suite_dir_, ec);
  std::ofstream(suite_dir_ / "missing.txt", std::ios::app) << why << "\n";
}

Status KernelGcov::started(vm::Guest& guest, bool boot_is_tested) {
  ++boots_;
  collections_ = 0;
  lost_ = false;
  if (boot_is_tested) return {};
  std::string reset = std::string(kGuestGcovDir) + "/reset";
  auto wrote = guest.agent().write_file(reset, "1\n");
  if (!wrote) return wrote.error();
  if (*wrote != 0) {
    Error e{fmt::format("guest {}: zeroing the gcov counters ({}): {} (is this kernel built with --gcov?)", boots_,
                        reset, std::strerror(*wrote))};
    note_missing(e.message);
    return e;
  }
  return {};
}

Status KernelGcov::collect(vm::Guest& guest) {
  if (boots_ == 0) return {};
  std::vector<std::string> paths;
  TRACEBED_TRY(find_counts(guest.agent(), std::string(kGuestGcovDir), paths, 0));
  constexpr uint32_t kMaxCounts = 16u << 20;  // the agent's largest reply is twice this
  TRACEBED_ASSIGN_OR_RETURN(std::vector<Result<std::string>> data, guest.agent().read_files(paths, kMaxCounts));
  fs::path dir = boot_dir();
  for (size_t i = 0; i < paths.size(); ++i) {
    if (!data[i]) return Error{fmt::format("copying {} out of the guest: {}", paths[i], data[i].error().message)};
    // A cut file would merge as garbage: refuse it.
    if (data[i]->size() >= kMaxCounts)
      return Error{fmt::format("{} is {} MiB or more, more than one copy carries", paths[i], kMaxCounts >> 20)};
    TRACEBED_TRY(base::write_file_atomic(dir / paths[i].substr(kGuestGcovDir.size() + 1), *data[i]));
  }
  ++collections_;
  return {};
}

void KernelGcov::lost(std::string_view test) {
  if (boots_ == 0 || std::exchange(lost_, true)) return;
  note_missing(fmt::format("guest {} died during {}: its counts {} are missing", boots_, test,
                           collections_ ? "since the test before" : "(all of them)"));
}

}  // namespace tracebed::testlib
