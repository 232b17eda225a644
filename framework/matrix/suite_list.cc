#include "framework/matrix/suite_list.h"

#include "framework/base/files.h"
#include "framework/base/text.h"

namespace tracebed::matrix {

namespace fs = std::filesystem;

std::vector<fs::path> read_suite_list(const fs::path& file) {
  std::vector<fs::path> out;
  auto text = base::read_file(file);
  if (!text) return out;
  for (std::string_view line : base::split_lines(*text))
    if (!line.empty()) out.emplace_back(line);
  return out;
}

std::vector<fs::path> built_suites() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return read_suite_list(self.parent_path() / "tracebed-suites.txt");
}

}  // namespace tracebed::matrix
