#include "framework/base/install_layout.h"

namespace tracebed::base {

namespace fs = std::filesystem;

fs::path executable_path() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self;
}

fs::path executable_dir() { return executable_path().parent_path(); }

fs::path installed_or_built(const fs::path& built) {
  std::error_code ec;
  fs::path dir = executable_dir();
  if (!built.empty() && !dir.empty())
    for (const fs::path& candidate : {dir / built.filename(), dir.parent_path() / "lib" / "tracebed" / built.filename()})
      if (fs::exists(candidate, ec)) return candidate;
  return built;
}

fs::path shared_data(const fs::path& relative, const fs::path& source_dir, const fs::path& source_relative) {
  std::error_code ec;
  fs::path dir = executable_dir();
  // bin/ or lib/tracebed/ beside share/
  for (const fs::path& prefix : {dir.parent_path(), dir.parent_path().parent_path()}) {
    fs::path candidate = prefix / "share" / "tracebed" / relative;
    if (!dir.empty() && fs::exists(candidate, ec)) return candidate;
  }
  return source_dir / source_relative;
}

}  // namespace tracebed::base
